import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { applyTheme } from './components/ThemeToggle.tsx';
import './styles.css';

// Before the first paint, so a chosen theme never flashes the other one.
applyTheme();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
