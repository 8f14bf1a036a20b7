/**
 * content-api/model: the page model (zod schemas, the types inferred from them, validation) and the
 * rendition rules (sizes, names, srcsets, Image objects, markup): pure functions and data, loading
 * neither sharp nor any client, for programs that read or write pages. Every name here is
 * documented in docs/library.md, and test/public-api.test.ts pins the list.
 */
// biome-ignore-all assist/source/organizeImports: grouped by part of the tool, in the order of docs/library.md

// Errors: what these functions throw, the base class of every error of the package.
export { ContentApiError, InvalidArgumentError } from '../errors.js';

// The rendition rules: pure functions of sizes and names, used by every command.
export {
  FORCEABLE_FORMATS,
  FORMAT_CHOICES,
  type ForceableFormat,
  type FormatChoice,
  OUTPUT_FORMATS,
  type OutputFormat,
} from '../renditions/formats.js';
export {
  DEFAULT_SIZES,
  type MarkupImage,
  type MarkupPlaceholder,
  type PictureOptions,
  pictureHtml,
  picturesHtml,
} from '../markup/picture.js';
export {
  buildImageObject,
  type ImageObject,
  type RenditionFile,
  type RenditionSize,
} from '../renditions/image-object.js';
export {
  buildSrcset,
  DEFAULT_MEDIA_URL,
  fitWithinBox,
  mediaPath,
  mediaUrl,
  NAMING_STYLES,
  type NamingStyle,
  type ParsedRenditionFileName,
  type PixelSize,
  parseRenditionFileName,
  parseSrcset,
  RENDITION_BOXES,
  RENDITION_KEYS,
  type RenditionKey,
  relativeSize,
  renditionFileName,
  renditionSizes,
  renditionVersion,
  type SrcsetEntry,
  safeName,
  urlVersion,
} from '../renditions/rules.js';
export { IMAGE_RULES, type ImageFinding, type ImageRule, verifyImage } from '../renditions/verify.js';

// The page model: its zod schemas as one value (the Page and each part by name), their types, its validation.
export { BLOCK_TYPES, type BlockType } from '../page/blocks.js';
export { pageJsonSchema } from '../page/schema.js';
export * as schemas from '../page/schemas.js';
export type * from '../page/types.js';
export {
  PAGE_RULES,
  type PageRule,
  type Problem,
  type Severity,
  type ValidateOptions,
  type Validation,
  validatePage,
} from '../page/validate.js';
export { type FoundImage, findImages, formatPath, type JsonPath } from '../page/walk.js';
export { BASE_URL_PLACEHOLDER } from '../page/common.js';
