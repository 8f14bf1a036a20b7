/**
 * Every rule `check` reports, in one table: the page rules, the image rules, and the rules
 * of `check` itself (the page is JSON, its media files are what it says). The config file's
 * rule names, SARIF's rule list and the README come from here.
 */
import { PAGE_RULES } from '../page/validate.js';
import { IMAGE_RULES } from '../renditions/verify.js';

/** Rules of `check` itself; the `file-*` ones need `--verify-files`. */
export const FILE_RULES = {
  'page-json': 'the page is JSON',
  'page-fetch': 'every page the listing gives can be fetched (--all-pages)',
  'base-url-placeholder': 'no {base_url} placeholder is left (a serve content folder needs --base-url)',
  'file-missing': 'every media file the page names exists',
  'file-unreadable': 'every media file the page names can be read and is an image',
  'file-outside':
    'every media file the page names is inside the --verify-files folder (a symlink out of it is never read)',
  'file-size': "the file's real pixel size is the size the JSON gives",
  'file-format': "the file's real format is the one its extension names",
  'file-picture':
    "an Image's renditions show one picture, the one render recorded in the manifest when there is one " +
    '(not another, stale, rotated, mirrored or colour-converted wrongly)',
  'file-version': "a URL's ?v= version is the file's: the first 8 hex digits of its SHA-256",
} as const;

export type FileRule = keyof typeof FILE_RULES;

export const CHECK_RULES: Readonly<Record<string, string>> = { ...PAGE_RULES, ...IMAGE_RULES, ...FILE_RULES };

export const RULE_IDS = Object.keys(CHECK_RULES) as [string, ...string[]];
