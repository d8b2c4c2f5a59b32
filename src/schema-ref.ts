import type { TSchema } from 'typebox'

/**
 * A `$ref` to a shared schema (one registered with its `$id`), typed as the schema itself so route
 * types infer through it. The OpenAPI document then names the component instead of inlining it.
 */
export function ref<T extends TSchema>(schema: T): T {
  const id = (schema as { $id?: string }).$id
  if (!id) throw new Error('ref() needs a schema with an $id')
  return { $ref: id } as unknown as T
}

/** Largest id or categoryId: 2^53 - 1, the largest integer JSON numbers carry exactly. */
export const MAX_SAFE_ID = Number.MAX_SAFE_INTEGER
