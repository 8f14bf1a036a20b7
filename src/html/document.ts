/**
 * What the HTML reports (`check --reporter html`, the render contact sheet) share as pages:
 * one self-contained document with its style inline, and the base of that style.
 */
import { escapeHtml } from './escape.js';

const PLACEHOLDER_RULE =
  'figure .placeholder { font-size: 11px; color: #555; background: #f2f2f2; display: flex; align-items: center; ' +
  'justify-content: center; overflow: hidden; }';

/**
 * What shows through a thumbnail's transparent pixels: a checkerboard of two mid greys, so that white
 * art and black art alike stand out from it (each above 3:1, the contrast WCAG asks of graphics),
 * where a light one hides white art (a logo for a dark page) entirely.
 */
const CHECKERBOARD = 'repeating-conic-gradient(#707070 0 25%, #8c8c8c 0 50%) 0 0 / 16px 16px';

/** Page, summary, notes, rendition figures (a thumbnail or a box in its place), code, listed rows. */
export const BASE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2.5rem; word-break: break-all; }
.summary { padding: .6rem 1rem; border-radius: 6px; background: #e8f5e9; display: inline-block; }
.summary.bad { background: #fdecea; }
.note { color: #555; }
.path { font-family: ui-monospace, monospace; font-size: 12px; color: #555; margin-bottom: .5rem; }
.renditions { display: flex; gap: 12px; align-items: flex-end; overflow-x: auto; }
figure { margin: 0; text-align: center; }
figure img, figure .placeholder { display: block; border: 1px solid #ccc; box-sizing: content-box; }
figure img { background: ${CHECKERBOARD}; }
${PLACEHOLDER_RULE}
figcaption { font-size: 12px; color: #333; margin-top: 4px; }
li.error { color: #b3261e; } li.warning { color: #8a5a00; }
code { font-family: ui-monospace, monospace; font-size: 12px; }
table.listed { border-collapse: collapse; font-size: 13px; } table.listed td { padding: 2px 10px 2px 0; }
`;

/**
 * A whole document: `title` (escaped) as its title and first heading, `style` inline, then
 * `body`, markup the caller has escaped. No script and no external resource.
 */
export function htmlDocument(title: string, style: string, body: string): string {
  const head =
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><style>${style}</style></head>`;
  return `<!doctype html>
<html lang="en">
${head}
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}
