/** The JSON Schema of the Page, generated from the zod model, for other languages and tools. */
import { z } from 'zod';
import { pageSchema } from './page.js';

export function pageJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(pageSchema, { target: 'draft-2020-12', unrepresentable: 'any' }),
    title: 'Content API Page (GET {base_url}/api/v2/pages/{id}/)',
  };
}
