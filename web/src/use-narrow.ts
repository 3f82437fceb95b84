import { useEffect, useState } from 'react';

/** The width below which the layout is one column (the stylesheet's phone breakpoint). */
const NARROW = '(max-width: 768px)';

/** Whether the window is phone-narrow, following it as it changes (a rotated phone, a resized window). */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW);
    const onChange = () => setNarrow(query.matches);
    query.addEventListener('change', onChange);
    onChange();
    return () => query.removeEventListener('change', onChange);
  }, []);
  return narrow;
}

/** Whether two texts say the same, ignoring case, spacing and closing punctuation (a title and its question). */
export function sameText(a: string, b: string): boolean {
  const norm = (text: string) =>
    text
      .toLowerCase()
      .replace(/[?.!:\s]+$/u, '')
      .replace(/\s+/g, ' ')
      .trim();
  return norm(a) === norm(b);
}
