import { useEffect, useState } from 'react';

type Theme = 'system' | 'light' | 'dark';
const themes: Theme[] = ['system', 'light', 'dark'];

function storedTheme(): Theme {
  const stored = localStorage.getItem('quarry-theme');
  return themes.includes(stored as Theme) ? (stored as Theme) : 'system';
}

/** Puts the theme on the page: `data-theme` on `<html>`, none for the system's choice. */
export function applyTheme(theme: Theme = storedTheme()): void {
  if (theme === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', theme);
}

/** Light, dark, or the system's choice; remembered in this browser. */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  useEffect(() => {
    applyTheme(theme);
    localStorage.setItem('quarry-theme', theme);
  }, [theme]);
  return (
    <label className="theme-toggle">
      <span className="muted small">Theme</span>
      <select aria-label="Theme" value={theme} onChange={(event) => setTheme(event.target.value as Theme)}>
        {themes.map((each) => (
          <option key={each} value={each}>
            {each}
          </option>
        ))}
      </select>
    </label>
  );
}
