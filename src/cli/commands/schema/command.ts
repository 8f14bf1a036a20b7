/**
 * `content-api schema`: the JSON Schema of the Page, or of the config file.
 */
import type { Command } from 'commander';
import { epilogue } from '../../help.js';
import type { Flags } from '../../options.js';
import { printData } from '../../output.js';

const EXAMPLES = [
  'content-api schema > page.schema.json',
  'content-api schema | jq .properties.meta',
  'content-api schema --config > content-api.config.schema.json',
];

export function schemaCommand(program: Command): Command {
  return program
    .command('schema')
    .summary('print the JSON Schema of the Page, or of the config file')
    .description(
      'Print the JSON Schema (draft 2020-12) of the Page, generated from the zod model, for other languages ' +
        'and tools; with --config, that of content-api.config.json.',
    )
    .option('--config', 'print the schema of the config file (content-api.config.json) instead')
    .addHelpText('after', epilogue(EXAMPLES, { 0: 'the schema was printed', 2: 'bad flags' }))
    .action(async (flags: Flags) => {
      const schema = flags.config
        ? (await import('../../../check/config.js')).configJsonSchema()
        : (await import('../../../page/schema.js')).pageJsonSchema();
      printData(JSON.stringify(schema, null, 2));
    });
}
