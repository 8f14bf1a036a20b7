/**
 * Text from outside (file names, page JSON, error messages) made safe to write into an HTML
 * report: as element text, or as a double-quoted attribute value.
 */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
