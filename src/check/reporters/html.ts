/**
 * The HTML reporter: a contact sheet a person opens in a browser. Every image's five
 * renditions side by side at their real proportions, with their sizes, and each finding
 * next to the image it concerns. One self-contained file.
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { RENDITION_KEYS } from '../../renditions/rules.js';
import type { CheckReport, CheckedImage, Finding } from '../check.js';

const html = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Thumbnails share one height; each is as wide as its real aspect ratio makes it. */
const THUMB_HEIGHT = 120;

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2.5rem; word-break: break-all; }
.summary { padding: .6rem 1rem; border-radius: 6px; background: #e8f5e9; display: inline-block; }
.summary.bad { background: #fdecea; }
.image { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .8rem 1rem; margin: 1rem 0; }
.image.has-findings { border-color: #d93025; }
.path { font-family: ui-monospace, monospace; font-size: 12px; color: #555; margin-bottom: .5rem; }
.renditions { display: flex; gap: 12px; align-items: flex-end; overflow-x: auto; }
figure { margin: 0; text-align: center; }
figure img { display: block; background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; border: 1px solid #ccc; }
figcaption { font-size: 12px; color: #333; margin-top: 4px; }
ul.findings { margin: .6rem 0 0; padding-left: 1.2rem; }
li.error { color: #b3261e; } li.warning { color: #8a5a00; }
code { font-family: ui-monospace, monospace; font-size: 12px; }
`;

export interface HtmlOptions {
  title?: string;
}

export function htmlReport(report: CheckReport, options: HtmlOptions = {}): string {
  const title = options.title ?? 'content-api check';
  const total = report.errors + report.warnings;
  const body = report.pages.map((page) => {
    const imageFindings = (image: CheckedImage) => page.problems.filter((p) => p.path === image.path || p.path.startsWith(`${image.path}.`));
    const pageLevel = page.problems.filter((p) => !page.images.some((image) => p.path === image.path || p.path.startsWith(`${image.path}.`)));
    // Images with findings first: that is what a person opens the sheet for.
    const cards = page.images.map((image) => ({ image, findings: imageFindings(image) }));
    cards.sort((a, b) => Number(b.findings.length > 0) - Number(a.findings.length > 0));
    const images = cards.map(({ image, findings }) => imageCard(image, findings)).join('\n');
    return `<section class="page" data-source="${html(page.source)}">
<h2>${html(page.source)}</h2>
${pageLevel.length ? `<ul class="findings page-findings">${pageLevel.map(findingItem).join('')}</ul>` : ''}
${images || '<p>No images.</p>'}
</section>`;
  });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${html(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${html(title)}</h1>
<p class="summary${total ? ' bad' : ''}" data-errors="${report.errors}" data-warnings="${report.warnings}">${report.pages.length} page(s), ${report.pages.reduce((n, p) => n + p.images.length, 0)} image(s): ${total === 0 ? 'no findings' : `${report.errors} error(s), ${report.warnings} warning(s)`}</p>
${body.join('\n')}
</body>
</html>
`;
}

function imageCard(image: CheckedImage, findings: Finding[]): string {
  const figures = RENDITION_KEYS.map((key) => {
    const size = image.sizes[key];
    if (!size) return `<figure data-key="${key}"><figcaption>${key}: missing</figcaption></figure>`;
    const width = Math.max(1, Math.round((THUMB_HEIGHT * size.width) / size.height));
    return `<figure data-key="${key}" data-width="${size.width}" data-height="${size.height}"><img src="${html(srcFor(size.src))}" width="${width}" height="${THUMB_HEIGHT}" alt="${key} rendition" loading="lazy"><figcaption>${key} ${size.width}x${size.height}</figcaption></figure>`;
  }).join('');
  return `<div class="image${findings.length ? ' has-findings' : ''}" data-path="${html(image.path)}">
<div class="path">${html(image.path)}</div>
<div class="renditions">${figures}</div>
${findings.length ? `<ul class="findings">${findings.map(findingItem).join('')}</ul>` : ''}
</div>`;
}

function findingItem(finding: Finding): string {
  return `<li class="${finding.severity}" data-rule="${html(finding.rule)}"><code>${html(finding.path)}</code> [${html(finding.rule)}] ${html(finding.message)}</li>`;
}

/** A file found on disk becomes a file: URL so the sheet shows it; URLs stay as they are. */
function srcFor(src: string): string {
  return path.isAbsolute(src) ? pathToFileURL(src).href : src;
}
