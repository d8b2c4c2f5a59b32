import YAML from 'yaml'
import type { Config } from '../config.js'
import { sha256 } from '../sha256.js'

/** The document for one base address, as served: each rendering is made on first use. */
export interface RenderedDocument {
  readonly etag: string
  json(): string
  yaml(): string
}

/**
 * Stands where the base address goes while the document is rendered: printable ASCII that JSON and YAML
 * both write as it is, and that no other text of the document contains.
 */
const BASE = 'petstore-base-address-9f3c'

/**
 * The OpenAPI document for any base address, rendered once per process (CONTRACT §12): the document is
 * built and written as JSON once, with a placeholder where the base address goes, and YAML once, when it is
 * first asked for. A base address is put into that text, never rendered with it, so a Host the service
 * has not seen costs what a known one costs. Only a base address that is also a configured environment's
 * (at most two) gets a rendering of its own, since its server entry then reads differently.
 */
export function createDocuments(
  swagger: () => unknown,
  config: Config,
  log: (rendering: { format: 'json' | 'yaml'; baseUrl: string }) => void,
) {
  let template: { json: string[]; yaml?: string[]; etag: string } | undefined
  const own = new Map<string, RenderedDocument>()

  function templateOf() {
    if (!template) {
      const json = JSON.stringify(documentFor(swagger(), config, BASE))
      template = { json: json.split(BASE), etag: sha256(json) }
      log({ format: 'json', baseUrl: 'any' })
    }
    return template
  }

  function withBase(baseUrl: string): RenderedDocument {
    const shape = templateOf()
    // The document differs only in the base address: the tag is the template's with that address.
    const etag = `"${sha256(`${shape.etag}\n${baseUrl}`).slice(0, 27)}"`
    return {
      etag,
      json: () => shape.json.join(JSON.stringify(baseUrl).slice(1, -1)),
      yaml: () => {
        if (!shape.yaml) {
          shape.yaml = YAML.stringify(documentFor(swagger(), config, BASE)).split(BASE)
          log({ format: 'yaml', baseUrl: 'any' })
        }
        return shape.yaml.join(baseUrl)
      },
    }
  }

  function rendered(baseUrl: string): RenderedDocument {
    const object = documentFor(swagger(), config, baseUrl)
    const json = JSON.stringify(object)
    let yaml: string | undefined
    log({ format: 'json', baseUrl })
    return {
      etag: `"${sha256(json).slice(0, 27)}"`,
      json: () => json,
      yaml: () => {
        if (yaml === undefined) log({ format: 'yaml', baseUrl })
        yaml ??= YAML.stringify(object)
        return yaml
      },
    }
  }

  return (baseUrl: string): RenderedDocument => {
    if (baseUrl !== config.productionUrl && baseUrl !== config.stagingUrl) return withBase(baseUrl)
    const known = own.get(baseUrl)
    if (known) return known
    const document = rendered(baseUrl)
    own.set(baseUrl, document)
    return document
  }
}

/** The spec's two environments: their base addresses are `{base_url}` and `{staging_base_url}` there. */
const ENVIRONMENTS = [
  {
    description: 'Production',
    variable: 'base_url',
    setting: 'PETSTORE_PRODUCTION_URL',
    placeholder: 'https://petstore.example/v1',
  },
  {
    description: 'Staging',
    variable: 'staging_base_url',
    setting: 'PETSTORE_STAGING_URL',
    placeholder: 'https://staging.petstore.example/v1',
  },
] as const

interface Server {
  url: string
  description: string
  variables?: Record<string, { default: string; description: string }>
}

/**
 * The document with its servers: this one first (so "Try it" calls it), then production and staging (CONTRACT
 * §9). An environment whose address is configured is listed at it; one that is not is listed as the spec
 * writes it, a URL template (`{base_url}`) whose variable the reader fills in, preset to a placeholder
 * (`.example`) rather than to this server, which it may well not be.
 */
export function documentFor(document: unknown, config: Config, baseUrl: string): Record<string, unknown> {
  const here: Server = { url: baseUrl, description: `This server (${config.env})` }
  const servers = [here]
  const configured = { base_url: config.productionUrl, staging_base_url: config.stagingUrl }
  for (const { description, variable, setting, placeholder } of ENVIRONMENTS) {
    const url = configured[variable]
    if (url === undefined) {
      const help = `The ${description.toLowerCase()} base address, ending in /v1 (not configured: ${setting}).`
      servers.push({
        url: `{${variable}}`,
        description: `${description} (address not configured)`,
        variables: { [variable]: { default: placeholder, description: help } },
      })
    } else if (url !== here.url) servers.push({ url, description })
    else here.description = description
  }
  const {
    paths = {},
    components,
    ...rest
  } = document as { paths?: Record<string, unknown>; components?: Components }
  return { ...rest, servers, paths: relativeToServers(paths), components: withTypedArrayItems(components) }
}

type Schema = { type?: string; items?: Schema; $ref?: string }
type Components = { schemas?: Record<string, Schema> }

/**
 * `Pets` and `Orders` are arrays of `$ref`s, which the docs page labels `array<any>` until a reader opens
 * them (Swagger UI infers a type only from the keywords it sees). Beside each such `$ref` the document
 * states the type of the schema it names (OpenAPI 3.1 allows keywords beside `$ref`), so they read
 * `array<object>` at once. The routes' own schemas, which validate and serialize, are not touched.
 */
function withTypedArrayItems(components: Components | undefined): Components | undefined {
  const schemas = components?.schemas
  if (!schemas) return components
  const typeOf = (ref: string) => schemas[ref.slice(ref.lastIndexOf('/') + 1)]?.type
  const typed = Object.entries(schemas).map(([name, schema]) => {
    const ref = schema.type === 'array' ? schema.items?.$ref : undefined
    const type = ref && typeOf(ref)
    return [name, type ? { ...schema, items: { ...schema.items, type } } : schema]
  })
  return { ...components, schemas: Object.fromEntries(typed) }
}

/**
 * The routes live under /v1, and every server's address ends in /v1 (as the spec's base addresses do),
 * so the document's paths are relative to it, as the spec writes them: `/pets`, `/pets/{petId}`.
 */
function relativeToServers(paths: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [path.replace(/^\/v1(?=\/)/, ''), item]),
  )
}
