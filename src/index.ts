/**
 * content-api as a library. Everything the CLI does is available here.
 */

export { Baseline, type BaselineEntry, BaselineError, BaselineRecorder, pageKey } from './check/baseline.js';
export {
  type CheckedImage,
  type CheckedPage,
  type CheckOptions,
  type CheckReport,
  CheckRun,
  type CheckSummary,
  checkPages,
  FILE_RULES,
  type Finding,
} from './check/check.js';
export {
  CONFIG_FILE,
  type Config,
  ConfigError,
  configJsonSchema,
  configSchema,
  findConfig,
  type LoadedConfig,
  loadConfig,
  parseConfig,
} from './check/config.js';
export { locator, parseJsonPath, type TextPosition } from './check/locate.js';
export { type MediaReference, mediaReferences } from './check/media.js';
export { createPolicy, globToRegExp, jsonPathPattern, type Policy } from './check/policy.js';
export {
  closeFileSource,
  type FileSource,
  MediaSourceError,
  openFileSource,
  type ProbeResult,
  probe,
  type ReadResult,
  readMedia,
} from './check/probe.js';
export { type HtmlOptions, htmlReporter } from './check/reporters/html.js';
export { githubReporter, jsonLinesReporter, jsonReporter, junitReporter, xmlText } from './check/reporters/machine.js';
export type { Reporter, RunEnd } from './check/reporters/reporter.js';
export { type SarifOptions, sarifReporter } from './check/reporters/sarif.js';
export { textReporter } from './check/reporters/text.js';
export { CHECK_RULES, type FileRule } from './check/rules.js';
export { fillBaseUrl, type LoadedPage, loadTargets, type TargetOptions } from './check/targets.js';
export { HTTP_DEFAULTS } from './client/defaults.js';
// The HTTP client and inspect.
export {
  createDispatcher,
  fetchBytes,
  fetchJson,
  fetchPrefix,
  fetchWithRetries,
  HttpError,
  type HttpErrorCode,
  type HttpOptions,
  type HttpResponse,
  type JsonResponse,
} from './client/http.js';
export { type FetchPageOptions, fetchPage, type LoadPageOptions, loadPage, pageUrl } from './client/pages.js';
export {
  ContentApiError,
  escapeText,
  InvalidArgumentError,
  ManifestError,
  OutputNotWritableError,
  SourceError,
  type SourceErrorCode,
  StorageError,
  type StorageErrorKind,
} from './errors.js';
export { type InspectOptions, type InspectTargetOptions, inspectPage, inspectTarget } from './inspect/inspect.js';
export { buildInspectReport, type InspectReport } from './inspect/report.js';
export {
  BLOCK_TYPES,
  BLOCK_VALUES,
  type BlockType,
  bannerSchema,
  blockSchema,
  relatedPresentationSchema,
} from './page/blocks.js';
export { imageSchema } from './page/image.js';
export {
  type DuplicateKey,
  decodeUtf8,
  duplicateKeys,
  MAX_JSON_DEPTH,
  type ParsedJson,
  parseJsonText,
} from './page/json-text.js';
export { listStageSchema } from './page/list-stage.js';
export { pageMetaSchema, parentSummarySchema, socialMetaSchema } from './page/meta.js';
// The page model (zod) and its validation.
export { pageEnvelopeSchema, pageSchema, presentationStageSchema } from './page/page.js';
export { pageJsonSchema } from './page/schema.js';
export {
  articleSummarySchema,
  exhibitionSummarySchema,
  newsCategorySchema,
  newsEntrySchema,
} from './page/summaries.js';
export { embedSource, plainText } from './page/text.js';
export type * from './page/types.js';
export {
  PAGE_RULES,
  type PageRule,
  type Problem,
  type Severity,
  type ValidateOptions,
  type Validation,
  validatePage,
} from './page/validate.js';
export { type FoundImage, findImages, findObjects, formatPath, type JsonPath } from './page/walk.js';
export {
  artworkInquirySchema,
  generalInquirySchema,
  groupedWorkSchema,
  inquiryFormDataSchema,
  workSchema,
} from './page/work.js';
export { groupPageImages, type ImageGroup, type PageImages } from './page-render/images.js';
// Re-rendering a page's images.
export {
  type PageRenderFailure,
  type PageRenderReport,
  type PageRenderResult,
  type RenderPageOptions,
  renderPage,
} from './page-render/render-page.js';
export { replaceValues, type ValueEdit } from './page-render/rewrite.js';
export { type CollectOptions, collectBatch, type QueueReport } from './queue/collect.js';
// Rendering on many machines: a BullMQ queue on Redis (render --queue, worker, queue status/results).
export { connectQueue, type QueueConnection, type QueueOptions } from './queue/connection.js';
export { type EnqueueOptions, enqueueRender } from './queue/enqueue.js';
export type { BatchRecord, JobData } from './queue/protocol.js';
export { type QueueStatus, queueStatus } from './queue/status.js';
export { type RenderWorker, startWorker, type WorkerJobEvent, type WorkerOptions } from './queue/worker.js';
export { type Original, stemFor } from './renditions/discover.js';
export {
  FORCEABLE_FORMATS,
  type ForceableFormat,
  OUTPUT_FORMATS,
  type OutputFormat,
  outputFormatFor,
} from './renditions/formats.js';
export {
  buildImageObject,
  type ImageObject,
  type RenditionFile,
  type RenditionSize,
} from './renditions/image-object.js';
export { MANIFEST_FILE } from './renditions/manifest.js';
export {
  type RenderFailure,
  type RenderOptions,
  type RenderProgress,
  type RenderReport,
  type RenderResult,
  type RenderStatus,
  renderOriginal,
  renderOriginals,
  renderSources,
} from './renditions/render.js';
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
  type SrcsetEntry,
  safeName,
} from './renditions/rules.js';
export {
  DEFAULT_PIXEL_LIMIT,
  type QualitySettings,
  type RenderSettings,
  renderSettingsSchema,
  resolveSettings,
} from './renditions/settings.js';
export { parseShard, type Shard, shardOf } from './renditions/shard.js';
export { IMAGE_RULES, type ImageFinding, type ImageRule, verifyImage } from './renditions/verify.js';
// The read-only API over a content folder, and check.
export {
  BASE_URL_PLACEHOLDER,
  type Content,
  type ContentRecord,
  InvalidContentError,
  loadContent,
  MAX_RECORD_BYTES,
} from './server/content.js';
export { PREPARED_CACHE_BYTES, PreparedCache, type PreparedResponse } from './server/prepared-cache.js';
export { createContentServer, type ServerOptions } from './server/server.js';
export { LocalStore } from './storage/local.js';
// Where media is: a local folder or an S3-compatible bucket, behind one interface.
export { openStore } from './storage/location.js';
export { isS3Url, parseS3Url, type S3Location, type S3Options } from './storage/s3-url.js';
export type { MediaStore, Staged, Stamp, StoredObject, WriteOptions } from './storage/store.js';
