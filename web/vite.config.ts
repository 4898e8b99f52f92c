// The dashboard's build: Preact (through @preact/preset-vite), hashed files under dist/assets that the hub caches
// for a year. `npm run dev` proxies /apiv1 to a hub on DEVICELAB_HUB (default http://127.0.0.1:8080).
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

export default defineConfig({
  plugins: [preact()],
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
  server: { proxy: { '/apiv1': process.env.DEVICELAB_HUB ?? 'http://127.0.0.1:8080' } },
});
