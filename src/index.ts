/**
 * content-api as a library. Everything the CLI does is available here.
 */
export { ContentApiError, InvalidArgumentError, ManifestError, OutputNotWritableError, SourceError, type SourceErrorCode } from './errors.js';
export {
  RENDITION_KEYS,
  RENDITION_BOXES,
  NAMING_STYLES,
  DEFAULT_MEDIA_URL,
  fitWithinBox,
  renditionSizes,
  renditionFileName,
  parseRenditionFileName,
  safeName,
  buildSrcset,
  parseSrcset,
  relativeSize,
  mediaUrl,
  type RenditionKey,
  type PixelSize,
  type NamingStyle,
  type ParsedRenditionFileName,
  type SrcsetEntry,
} from './renditions/rules.js';
export { OUTPUT_FORMATS, FORCEABLE_FORMATS, DEFAULT_QUALITY, outputFormatFor, type OutputFormat, type ForceableFormat, type QualitySettings } from './renditions/formats.js';
export { buildImageObject, type ImageObject, type RenditionSize, type RenditionFile } from './renditions/image-object.js';
export { DEFAULT_PIXEL_LIMIT } from './renditions/pipeline.js';
export { MANIFEST_FILE } from './renditions/manifest.js';
export { stemFor, type Original } from './renditions/discover.js';
export {
  renderOriginals,
  renderOriginal,
  type RenderOptions,
  type RenderReport,
  type RenderResult,
  type RenderFailure,
  type RenderProgress,
  type RenderStatus,
} from './renditions/render.js';
