/**
 * The public API is deliberate: each entry of the package (`content-api`, `content-api/model`,
 * `content-api/quality`, `content-api/queue`) exports exactly these names (values and types) from
 * its source, the built package exports exactly these values (and its namespaces these members),
 * and docs/library.md names every one. A name added or removed is a change to this list, made on
 * purpose. `content-api/model` loads no sharp and no client, the root entry neither bullmq nor
 * ioredis, each checked in a fresh process.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from './fixtures/launcher.js';

const ROOT = path.resolve(import.meta.dirname, '..');

type Entry = { source: string; values: string[]; types: string[] };

const ENTRIES: Record<string, Entry> = {
  '.': {
    source: 'src/index.ts',
    values: [
      'AVIF_THREADS',
      'Baseline',
      'BaselineError',
      'BaselineRecorder',
      'CHECK_RULES',
      'CONFIG_FILE',
      'CheckRun',
      'ConfigError',
      'ContentApiError',
      'DEFAULT_PIXEL_LIMIT',
      'DEFAULT_QUALITY_TARGET',
      'HTTP_DEFAULTS',
      'HttpError',
      'InvalidArgumentError',
      'InvalidContentError',
      'MANIFEST_FILE',
      'MANIFEST_RECORDS',
      'ManifestError',
      'MediaSourceError',
      'NotAPageError',
      'OutputNotWritableError',
      'PREVIEW_MAX_CHARS',
      'QueueError',
      'REPORTER_NAMES',
      'SourceError',
      'StorageError',
      'checkPages',
      'configJsonSchema',
      'configSchema',
      'contactSheetHtml',
      'createContentServer',
      'createPolicy',
      'createReporter',
      'fetchPage',
      'findConfig',
      'inspectPage',
      'inspectSite',
      'inspectTarget',
      'isS3Url',
      'loadConfig',
      'loadContent',
      'loadPage',
      'loadSite',
      'loadTargets',
      'openFileSource',
      'openStore',
      'pageUrl',
      'parseConfig',
      'parseS3Url',
      'parseShard',
      'placeholderOf',
      'renderOriginal',
      'renderOriginals',
      'renderPage',
      'renderSettingsSchema',
      'renderSources',
      'replaceValues',
      'resolveSettings',
      'shardOf',
      'stemFor',
    ],
    types: [
      'AlternateResult',
      'BaselineEntry',
      'CheckOptions',
      'CheckReport',
      'CheckSummary',
      'CheckedImage',
      'CheckedPage',
      'Config',
      'ContactSheetOptions',
      'Content',
      'ContentRecord',
      'FetchPageOptions',
      'FileRule',
      'FileSource',
      'FileSourceOptions',
      'Finding',
      'HttpErrorCode',
      'HttpOptions',
      'InspectFailure',
      'InspectOptions',
      'InspectReport',
      'InspectTargetOptions',
      'JsonResponse',
      'LoadPageOptions',
      'LoadedConfig',
      'LoadedPage',
      'MediaStore',
      'Original',
      'PageRenderFailure',
      'PageRenderReport',
      'PageRenderResult',
      'Placeholder',
      'Policy',
      'PolicyConfig',
      'QualitySettings',
      'RenderCounts',
      'RenderFailure',
      'RenderOptions',
      'RenderPageOptions',
      'RenderProgress',
      'RenderReport',
      'RenderResult',
      'RenderSettings',
      'RenderSettingsInput',
      'RenderStatus',
      'Reporter',
      'ReporterContext',
      'ReporterName',
      'RunEnd',
      'S3Location',
      'S3Options',
      'ServerOptions',
      'Shard',
      'SiteQuery',
      'SourceErrorCode',
      'Staged',
      'Stamp',
      'StorageErrorKind',
      'StoredObject',
      'TargetOptions',
      'ValueEdit',
      'WriteOptions',
    ],
  },
  './model': {
    source: 'src/api/model.ts',
    values: [
      'BASE_URL_PLACEHOLDER',
      'BLOCK_TYPES',
      'ContentApiError',
      'DEFAULT_MEDIA_URL',
      'DEFAULT_SIZES',
      'FORCEABLE_FORMATS',
      'FORMAT_CHOICES',
      'IMAGE_RULES',
      'InvalidArgumentError',
      'NAMING_STYLES',
      'OUTPUT_FORMATS',
      'PAGE_RULES',
      'RENDITION_BOXES',
      'RENDITION_KEYS',
      'buildImageObject',
      'buildSrcset',
      'findImages',
      'fitWithinBox',
      'formatPath',
      'mediaPath',
      'mediaUrl',
      'pageJsonSchema',
      'parseRenditionFileName',
      'parseSrcset',
      'pictureHtml',
      'picturesHtml',
      'relativeSize',
      'renditionFileName',
      'renditionSizes',
      'renditionVersion',
      'safeName',
      'schemas',
      'urlVersion',
      'validatePage',
      'verifyImage',
    ],
    types: [
      'ArticleSummary',
      'ArtworkInquiry',
      'Banner',
      'Block',
      'BlockType',
      'ExhibitionSummary',
      'ForceableFormat',
      'FormatChoice',
      'FoundImage',
      'GeneralInquiry',
      'GroupedWork',
      'Image',
      'ImageFinding',
      'ImageObject',
      'ImageRule',
      'InquiryFormData',
      'JsonPath',
      'ListStage',
      'MarkupImage',
      'MarkupPlaceholder',
      'NamingStyle',
      'NewsCategory',
      'NewsEntry',
      'OutputFormat',
      'Page',
      'PageMeta',
      'PageRule',
      'ParentSummary',
      'ParsedRenditionFileName',
      'PictureOptions',
      'PixelSize',
      'PresentationStage',
      'Problem',
      'RelatedPresentation',
      'RenditionFile',
      'RenditionKey',
      'RenditionSize',
      'RenditionSizeEntry',
      'Severity',
      'SocialMeta',
      'SrcsetEntry',
      'ValidateOptions',
      'Validation',
      'Work',
    ],
  },
  './quality': {
    source: 'src/api/quality.ts',
    values: ['RELAXED_SIMD_FLAG', 'ScorePool', 'prepareSsimulacra2', 'rawPixels', 'ssimulacra2'],
    types: ['Measured', 'PreparedSsimulacra2', 'RawPixels', 'ScorePoolOptions'],
  },
  './queue': {
    source: 'src/api/queue.ts',
    values: ['collectBatch', 'connectQueue', 'enqueueRender', 'queueStatus', 'startWorker'],
    types: [
      'BatchRecord',
      'CollectOptions',
      'EnqueueOptions',
      'JobData',
      'QueueConnection',
      'QueueOptions',
      'QueueReport',
      'QueueStatus',
      'RenderWorker',
      'WorkerJobEvent',
      'WorkerOptions',
    ],
  },
};

/**
 * The members of a namespace an entry exports, pinned as the entry's names are: `schemas` is the page
 * model whole (`schemas.blocks` holds one member per `BLOCK_TYPES`, pinned there).
 */
const MEMBERS: Record<string, Record<string, string[]>> = {
  './model': {
    schemas: [
      'articleSummary',
      'artworkInquiry',
      'banner',
      'block',
      'blocks',
      'exhibitionSummary',
      'generalInquiry',
      'groupedWork',
      'image',
      'inquiryFormData',
      'listStage',
      'newsCategory',
      'newsEntry',
      'page',
      'pageMeta',
      'parentSummary',
      'presentationStage',
      'relatedPresentation',
      'renditionSize',
      'socialMeta',
      'work',
    ],
  },
};

let program: ts.Program | undefined;

/**
 * One program for every entry: their modules are read and bound once, not per entry. What an entry
 * exports is declared in `src/`, so the packages' declarations (8 MB of them, TypeScript's own `lib`
 * files included) are read as empty files: the names and kinds come out the same, in a tenth of the
 * time. A package's export re-exported by an entry would read as a type here; none is.
 */
function exportsProgram(): ts.Program {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noLib: true,
    types: [],
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    file.includes(`${path.sep}node_modules${path.sep}`)
      ? ts.createSourceFile(file, '', language)
      : read(file, language, ...rest);
  const roots = Object.values(ENTRIES).map((entry) => path.join(ROOT, entry.source));
  return ts.createProgram(roots, options, host);
}

/** Every name `source` exports, with whether it is a value (else a type only), as TypeScript sees them. */
function declaredExports(source: string): Map<string, 'value' | 'type'> {
  const file = path.join(ROOT, source);
  program ??= exportsProgram();
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return [symbol.name, target.flags & ts.SymbolFlags.Value ? 'value' : 'type'];
    }),
  );
}

/**
 * The packages a fresh `node` loads with `import(specifier)`, by name (`sharp`, `bullmq`), and the
 * time the import took in ms: every module imported is seen by a resolve hook (module.register), every
 * module required (src/packages/) is in require's cache.
 */
async function loads(specifier: string): Promise<{ packages: string[]; ms: number }> {
  const hooks = `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      const found = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
      if (found) process.stderr.write('package ' + found[1] + '\\n');
      return resolved;
    }`)}`;
  const script = `
    import { createRequire, register } from 'node:module';
    register(${JSON.stringify(hooks)});
    const started = performance.now();
    await import(${JSON.stringify(specifier)});
    const ms = performance.now() - started;
    for (const file of Object.keys(createRequire(import.meta.url).cache)) {
      const found = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file);
      if (found) process.stderr.write('package ' + found[1] + '\\n');
    }
    console.log(ms);`;
  const { stdout, stderr } = await execFile(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
  });
  const packages = [...stderr.matchAll(/^package (.+)$/gm)].map((match) => match[1]!);
  return { packages: [...new Set(packages)].sort(), ms: Number(stdout.trim()) };
}

describe.each(Object.entries(ENTRIES))('the public API: %s', (entry, { source, values, types }) => {
  const specifier = entry === '.' ? 'content-api' : `content-api/${entry.slice(2)}`;

  it(`${source} exports exactly the values and types listed here`, () => {
    const declared = declaredExports(source);
    const of = (kind: 'value' | 'type') => [...declared].filter(([, k]) => k === kind).map(([name]) => name);
    expect(of('value').sort()).toEqual([...values].sort());
    expect(of('type').sort()).toEqual([...types].sort());
  });

  it('the built package exports exactly those values', async () => {
    expect(Object.keys(await import(specifier)).sort()).toEqual([...values].sort());
  });

  it('docs/library.md names every one of them', () => {
    const page = readFileSync(path.join(ROOT, 'docs/library.md'), 'utf8');
    const named = new Set([...page.matchAll(/`([A-Za-z_$][\w$]*)\b[^`]*`/g)].map((match) => match[1]));
    expect([...values, ...types].filter((name) => !named.has(name))).toEqual([]);
  });
});

describe.each(Object.entries(MEMBERS))('the namespaces of the public API: %s', (entry, namespaces) => {
  it('hold exactly the members listed here in the built package, and docs/library.md names each', async () => {
    const built = (await import(`content-api/${entry.slice(2)}`)) as Record<string, object>;
    const page = readFileSync(path.join(ROOT, 'docs/library.md'), 'utf8');
    for (const [namespace, members] of Object.entries(namespaces)) {
      expect(Object.keys(built[namespace]!).sort()).toEqual([...members].sort());
      expect(members.filter((member) => !page.includes(`\`${namespace}.${member}\``))).toEqual([]);
    }
  });
});

// The fresh processes of 'what each entry loads', started before the first test: they run while TypeScript reads the
// sources for the tests before them.
const loaded = new Map<string, Promise<{ packages: string[]; ms: number }>>();
beforeAll(() => {
  for (const specifier of ['content-api/model', 'content-api', 'content-api/queue']) {
    const promise = loads(specifier);
    promise.catch(() => {}); // its test awaits it, and fails with its error
    loaded.set(specifier, promise);
  }
});

describe('what each entry loads', () => {
  it('content-api/model loads zod alone: no sharp, no client, no queue', async () => {
    expect((await loaded.get('content-api/model')!).packages).toEqual(['zod']);
  });

  it('the root entry loads neither bullmq nor ioredis', async () => {
    const { packages } = await loaded.get('content-api')!;
    expect(packages).toContain('sharp');
    expect(packages.filter((name) => name === 'bullmq' || name === 'ioredis')).toEqual([]);
  });

  it('content-api/queue loads bullmq (the hook sees what is loaded)', async () => {
    expect((await loaded.get('content-api/queue')!).packages).toContain('bullmq');
  });
});
