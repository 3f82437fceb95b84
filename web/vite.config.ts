import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The web UI: built into web/dist, which `quarry serve` serves at `/`. */
export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { proxy: { '/api': 'http://127.0.0.1:7777', '/v1': 'http://127.0.0.1:7777' } },
});
