// The dashboard (`npm run build`): src/ui/ as dist/ui/, which the engine serves at /ui/. One minified
// ES module (app.js, with Preact inside), uPlot's chunk (imported when a deployment's page draws its
// first chart: the list of deployments, the first view, does not load it), one style sheet (app.css:
// uPlot's and ours) and index.html. Nothing is fetched from elsewhere when the page runs: the engine's
// Content-Security-Policy allows only its own origin, and no inline script or style.
import { readFile } from 'node:fs/promises';
import { defineConfig } from 'rolldown';

const ROOT = new URL('./', import.meta.url).pathname;

/** Writes index.html and app.css beside the bundle. */
const staticFiles = {
  name: 'ui-static-files',
  async generateBundle() {
    const [html, uplotCss, css] = await Promise.all([
      readFile(`${ROOT}src/ui/index.html`, 'utf8'),
      readFile(`${ROOT}node_modules/uplot/dist/uPlot.min.css`, 'utf8'),
      readFile(`${ROOT}src/ui/app.css`, 'utf8'),
    ]);
    this.emitFile({ type: 'asset', fileName: 'index.html', source: html });
    // ours after uPlot's, so the page's colours win
    this.emitFile({ type: 'asset', fileName: 'app.css', source: `${uplotCss}\n${css}` });
  },
};

export default defineConfig({
  input: { app: 'src/ui/main.tsx' },
  platform: 'browser',
  plugins: [staticFiles],
  // the sources import each other as `./x.js`, as the rest of the project does
  resolve: { extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } },
  tsconfig: 'tsconfig.ui.json',
  output: {
    dir: 'dist/ui',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    minify: true,
    cleanDir: true,
  },
});
