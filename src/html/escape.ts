/**
 * Text from outside (file names, page JSON, error messages) made safe to write into an HTML
 * report: as element text, or as a double-quoted attribute value.
 */
import { escapeText } from '../errors.js';

export function escapeHtml(text: string): string {
  // Control characters (an escape sequence in a file name) shown as JSON writes them: `\u001b`.
  return escapeText(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
