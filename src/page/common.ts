/**
 * Scalar shapes the spec fixes (section 2's notation): dates, timestamps, UUIDs, page types.
 * Objects are strict: a key the spec does not name is reported (as a warning, see
 * `validate.ts`), never silently dropped.
 */
import { z } from 'zod';

/**
 * How absolute URLs are written in a `serve` content folder (the spec's `{base_url}`): `serve`
 * fills it with the base URL of each request, `check --base-url` and `inspect --base-url` with theirs.
 */
export const BASE_URL_PLACEHOLDER = '{base_url}';

/** `YYYY-MM-DD`, a real calendar date. */
export const isoDate = z.iso.date({ error: 'expected a date as YYYY-MM-DD' });

/** `YYYY-MM-DDTHH:MM:SS.ffffff`, no zone offset (spec 2: "ISO 8601 strings without a zone offset"). */
export const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/, {
    error: 'expected a timestamp as YYYY-MM-DDTHH:MM:SS.ffffff without zone',
  })
  .refine((value) => !Number.isNaN(Date.parse(`${value.slice(0, 23)}Z`)), { error: 'not a real date and time' });

export const uuid = z.uuid({ error: 'expected a UUID' });

/** `site.<PageClass>`, e.g. `site.PresentationPage`. */
export const pageType = z.string().regex(/^site\.[A-Z][A-Za-z0-9]*$/, { error: 'expected site.<PageClass>' });

/** An absolute http(s) URL. */
export const absoluteUrl = z.url({ protocol: /^https?$/, error: 'expected an absolute http(s) URL' });

/** HTML held in a string. */
export const html = z.string();

/**
 * A field the spec shows only as null, so its type is unknown: any value is accepted here,
 * and a non-null one is reported as a warning by the consistency checks.
 */
export const onlySeenAsNull = z.unknown();

export const integer = z.number().int();
