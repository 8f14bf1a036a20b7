/**
 * content-api as a library. Everything the CLI does is available here.
 */
export {
  ContentApiError,
  InvalidArgumentError,
  ManifestError,
  OutputNotWritableError,
  SourceError,
  StorageError,
  escapeText,
  type SourceErrorCode,
  type StorageErrorKind,
} from './errors.js';
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
  mediaPath,
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
  renderSources,
  type RenderOptions,
  type RenderReport,
  type RenderResult,
  type RenderFailure,
  type RenderProgress,
  type RenderStatus,
} from './renditions/render.js';
export { parseShard, shardOf, type Shard } from './renditions/shard.js';

// Where media is: a local folder or an S3-compatible bucket, behind one interface.
export { openStore, parseS3Url, isS3Url, type S3Options, type S3Location } from './storage/location.js';
export { LocalStore } from './storage/local.js';
export type { MediaStore, StoredObject, Stamp, Staged, WriteOptions } from './storage/store.js';

// The page model (zod) and its validation.
export { pageSchema, presentationStageSchema, pageEnvelopeSchema } from './page/page.js';
export { pageMetaSchema, parentSummarySchema, socialMetaSchema } from './page/meta.js';
export { listStageSchema } from './page/list-stage.js';
export { imageSchema } from './page/image.js';
export { blockSchema, bannerSchema, relatedPresentationSchema, BLOCK_VALUES, BLOCK_TYPES, type BlockType } from './page/blocks.js';
export { workSchema, groupedWorkSchema, inquiryFormDataSchema, generalInquirySchema, artworkInquirySchema } from './page/work.js';
export { articleSummarySchema, exhibitionSummarySchema, newsEntrySchema, newsCategorySchema } from './page/summaries.js';
export type * from './page/types.js';
export { validatePage, PAGE_RULES, type Problem, type Severity, type PageRule, type ValidateOptions, type Validation } from './page/validate.js';
export { findImages, findObjects, formatPath, type FoundImage, type JsonPath } from './page/walk.js';
export { pageJsonSchema } from './page/schema.js';
export { MAX_JSON_DEPTH, parseJsonText, decodeUtf8, duplicateKeys, type ParsedJson, type DuplicateKey } from './page/json-text.js';
export { plainText, embedSource } from './page/text.js';
export { verifyImage, IMAGE_RULES, type ImageRule, type ImageFinding } from './renditions/verify.js';

// The HTTP client and inspect.
export {
  createDispatcher,
  fetchJson,
  fetchBytes,
  fetchPrefix,
  fetchWithRetries,
  HttpError,
  HTTP_DEFAULTS,
  type HttpOptions,
  type HttpResponse,
  type JsonResponse,
  type HttpErrorCode,
} from './client/http.js';
export { fetchPage, pageUrl, loadPage, type FetchPageOptions, type LoadPageOptions } from './client/pages.js';
export { inspectPage, inspectTarget, type InspectOptions, type InspectTargetOptions } from './inspect/inspect.js';
export { buildInspectReport, type InspectReport } from './inspect/report.js';

// The read-only API over a content folder, and check.
export { loadContent, InvalidContentError, BASE_URL_PLACEHOLDER, MAX_RECORD_BYTES, type Content, type ContentRecord } from './server/content.js';
export { PreparedCache, PREPARED_CACHE_BYTES, type PreparedResponse } from './server/prepared-cache.js';
export { createContentServer, type ServerOptions } from './server/server.js';
export { checkPages, CheckRun, FILE_RULES, type CheckReport, type CheckSummary, type CheckOptions, type CheckedPage, type CheckedImage, type Finding } from './check/check.js';
export { CHECK_RULES, type FileRule } from './check/rules.js';
export { loadTargets, fillBaseUrl, type LoadedPage, type TargetOptions } from './check/targets.js';
export { openFileSource, closeFileSource, readMedia, probe, MediaSourceError, type FileSource, type ProbeResult, type ReadResult } from './check/probe.js';
export { mediaReferences, type MediaReference } from './check/media.js';
export { Baseline, BaselineRecorder, BaselineError, pageKey, type BaselineEntry } from './check/baseline.js';
export { locator, parseJsonPath, type TextPosition } from './check/locate.js';
export { textReporter } from './check/reporters/text.js';
export { jsonReporter, jsonLinesReporter, junitReporter, githubReporter, xmlText } from './check/reporters/machine.js';
export { sarifReporter, type SarifOptions } from './check/reporters/sarif.js';
export { htmlReporter, type HtmlOptions } from './check/reporters/html.js';
export type { Reporter, RunEnd } from './check/reporters/reporter.js';
export { loadConfig, findConfig, parseConfig, configSchema, configJsonSchema, ConfigError, CONFIG_FILE, type Config, type LoadedConfig } from './config/config.js';
export { createPolicy, globToRegExp, jsonPathPattern, type Policy } from './config/policy.js';

// Re-rendering a page's images.
export { renderPage, type RenderPageOptions, type PageRenderReport, type PageRenderResult, type PageRenderFailure } from './page-render/render-page.js';
export { groupPageImages, type ImageGroup, type PageImages } from './page-render/images.js';
export { replaceValues, type ValueEdit } from './page-render/rewrite.js';

// Rendering on many machines: a BullMQ queue on Redis (render --queue, worker, queue status/results).
export { connectQueue, type QueueConnection, type QueueOptions } from './queue/connection.js';
export { enqueueRender, type EnqueueOptions } from './queue/enqueue.js';
export { collectBatch, type CollectOptions, type QueueReport } from './queue/collect.js';
export { startWorker, type WorkerOptions, type RenderWorker, type WorkerJobEvent } from './queue/worker.js';
export { queueStatus, type QueueStatus } from './queue/status.js';
export type { BatchRecord, JobData } from './queue/protocol.js';
