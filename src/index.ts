/**
 * content-api as a library: what the commands do (render, render a page, check, inspect, serve),
 * for programs of your own. The page model and the rendition rules are `content-api/model`, the
 * metric `content-api/quality`, the queue `content-api/queue`. Every name here is documented in
 * docs/library.md, and test/public-api.test.ts pins the list; anything else in the package is
 * internal and may change.
 */
// biome-ignore-all assist/source/organizeImports: grouped by part of the tool, in the order of docs/library.md

// Errors: one base class with a stable `code`; the subclasses of each part are exported beside it.
export {
  ContentApiError,
  InvalidArgumentError,
  ManifestError,
  OutputNotWritableError,
  QueueError,
  SourceError,
  type SourceErrorCode,
  StorageError,
  type StorageErrorKind,
} from './errors.js';

// Placeholders and the contact sheet: made from renditions' pixels.
export { PREVIEW_MAX_CHARS, type Placeholder, placeholderOf } from './renditions/placeholder.js';
export { type ContactSheetOptions, contactSheetHtml } from './contact-sheet/contact-sheet.js';

// Rendering originals: the settings, the batch, its report.
export { type Original, stemFor } from './renditions/discover.js';
export { MANIFEST_FILE, MANIFEST_RECORDS } from './renditions/manifest.js';
export {
  type AlternateResult,
  type RenderCounts,
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
  AVIF_THREADS,
  DEFAULT_PIXEL_LIMIT,
  DEFAULT_QUALITY_TARGET,
  type QualitySettings,
  type RenderSettings,
  type RenderSettingsInput,
  renderSettingsSchema,
  resolveSettings,
} from './renditions/settings.js';
export { parseShard, type Shard, shardOf } from './renditions/shard.js';

// Where media is: a local folder or an S3-compatible bucket, behind one interface.
export { openStore } from './storage/location.js';
export { isS3Url, parseS3Url, type S3Location, type S3Options } from './storage/s3-url.js';
export type { MediaStore, Staged, Stamp, StoredObject, WriteOptions } from './storage/store.js';

// Pages from the API, a file or standard input.
export { HTTP_DEFAULTS } from './client/defaults.js';
export { HttpError, type HttpErrorCode, type HttpOptions, type JsonResponse } from './client/http.js';
export {
  type FetchPageOptions,
  fetchPage,
  type LoadedPage,
  type LoadPageOptions,
  loadPage,
  pageUrl,
} from './client/pages.js';

// Re-rendering a page's images, and editing its text in place.
export {
  type PageRenderFailure,
  type PageRenderReport,
  type PageRenderResult,
  type RenderPageOptions,
  renderPage,
} from './page-render/render-page.js';
export { replaceValues, type ValueEdit } from './page-render/rewrite.js';

// inspect.
export {
  type InspectFailure,
  type InspectOptions,
  type InspectTargetOptions,
  inspectPage,
  inspectSite,
  inspectTarget,
  NotAPageError,
} from './inspect/inspect.js';
export type { InspectReport } from './inspect/report.js';

// serve: the read-only API over a content folder.
export { type Content, type ContentRecord, InvalidContentError, loadContent } from './server/content.js';
export { createContentServer, type ServerOptions } from './server/server.js';

// check: pages and the files behind them, the config file, baselines, reporters.
export { Baseline, type BaselineEntry, BaselineError, BaselineRecorder } from './check/baseline.js';
export {
  type CheckedImage,
  type CheckedPage,
  type CheckOptions,
  type CheckReport,
  CheckRun,
  type CheckSummary,
  checkPages,
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
export { createPolicy, type Policy, type PolicyConfig } from './check/policy.js';
export {
  type FileSource,
  type FileSourceOptions,
  MediaSourceError,
  openFileSource,
} from './check/probe.js';
export {
  createReporter,
  REPORTER_NAMES,
  type ReporterContext,
  type ReporterName,
} from './check/reporters/index.js';
export type { Reporter, RunEnd } from './check/reporters/reporter.js';
export { CHECK_RULES, type FileRule } from './check/rules.js';
export { loadSite, loadTargets, type TargetOptions } from './check/targets.js';
export type { SiteQuery } from './client/listing.js';
