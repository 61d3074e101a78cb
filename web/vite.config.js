// Vite builds the UI into one folder that the agent embeds (cmake/web.cmake). Relative
// asset URLs would break under /process/..., so the base is the server's root.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    target: 'es2022',
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
    reportCompressedSize: false,
  },
  test: {
    environment: 'node',
    include: ['test/**/*.test.js'],
  },
});
