import YAML from 'yaml'
import type { Config } from '../config.js'
import { sha256 } from '../sha256.js'
import { type CompressedPrefix, createCompressedPrefix } from './compressed-prefix.js'

/** The document for one base address, as served: a prefix rendered once, then its servers. */
export interface RenderedDocument {
  readonly etag: string
  json(): DocumentText
  yaml(): DocumentText
}

/** A rendering of the document: everything but the servers, compressed once, and the servers after it. */
export interface DocumentText {
  readonly prefix: CompressedPrefix
  readonly suffix: string
}

/**
 * Stands where the base address goes while the servers are rendered: printable ASCII that JSON and YAML
 * both write as it is, and that no other text of the servers contains.
 */
const BASE = 'petstore-base-address-9f3c'

interface Rendering {
  prefix: CompressedPrefix
  suffix: (baseUrl: string) => string
}

/**
 * The OpenAPI document for any base address, rendered once per process (CONTRACT §12): the document but its
 * servers, which come last, is written once per format (JSON at first use, YAML when first asked for) and
 * compressed once; the servers are written once with a placeholder where the base address goes. A base
 * address is put into that text, never rendered with it, so a Host the service has not seen costs what a
 * known one costs, compressed or not. Only a base address that is also a configured environment's (at most
 * two) gets servers of their own, since its entry then reads differently.
 */
export function createDocuments(
  swagger: () => unknown,
  config: Config,
  log: (rendering: { format: 'json' | 'yaml'; baseUrl: string }) => void,
) {
  let json: (Rendering & { etag: string }) | undefined
  let yaml: Rendering | undefined
  const own = new Map<string, { json: string; yaml?: string }>()

  function jsonRendering() {
    if (!json) {
      const text = JSON.stringify(documentBody(swagger()))
      const suffix = `,"servers":${JSON.stringify(serversFor(config, BASE))}}`.split(BASE)
      json = {
        prefix: createCompressedPrefix(text.slice(0, -1)),
        suffix: (baseUrl) => suffix.join(JSON.stringify(baseUrl).slice(1, -1)),
        etag: sha256(text),
      }
      log({ format: 'json', baseUrl: 'any' })
    }
    return json
  }

  function yamlRendering(): Rendering {
    if (!yaml) {
      const suffix = YAML.stringify({ servers: serversFor(config, BASE) }).split(BASE)
      yaml = {
        prefix: createCompressedPrefix(YAML.stringify(documentBody(swagger()))),
        suffix: (baseUrl) => suffix.join(baseUrl),
      }
      log({ format: 'yaml', baseUrl: 'any' })
    }
    return yaml
  }

  /** The servers of a configured environment's base address, in both formats, written once each. */
  function ownServers(baseUrl: string) {
    let servers = own.get(baseUrl)
    if (!servers) {
      servers = { json: `,"servers":${JSON.stringify(serversFor(config, baseUrl))}}` }
      own.set(baseUrl, servers)
      log({ format: 'json', baseUrl })
    }
    return servers
  }

  return (baseUrl: string): RenderedDocument => {
    const configured = baseUrl === config.productionUrl || baseUrl === config.stagingUrl
    const servers = configured ? ownServers(baseUrl) : undefined
    const { prefix, suffix, etag } = jsonRendering()
    const jsonSuffix = servers ? servers.json : suffix(baseUrl)
    return {
      // The document differs only in its servers: the tag is the prefix's with them.
      etag: `"${sha256(`${etag}\n${jsonSuffix}`).slice(0, 27)}"`,
      json: () => ({ prefix, suffix: jsonSuffix }),
      yaml: () => {
        const rendering = yamlRendering()
        if (!servers) return { prefix: rendering.prefix, suffix: rendering.suffix(baseUrl) }
        if (servers.yaml === undefined) log({ format: 'yaml', baseUrl })
        servers.yaml ??= YAML.stringify({ servers: serversFor(config, baseUrl) })
        return { prefix: rendering.prefix, suffix: servers.yaml }
      },
    }
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
 * The document's servers: this one first (so "Try it" calls it), then production and staging (CONTRACT §9).
 * An environment whose address is configured is listed at it; one that is not is listed as the spec writes
 * it, a URL template (`{base_url}`) whose variable the reader fills in, preset to a placeholder (`.example`)
 * rather than to this server, which it may well not be.
 */
function serversFor(config: Config, baseUrl: string): Server[] {
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
  return servers
}

/** The document as generated, without servers (serversFor's, written after it), its paths relative to them. */
function documentBody(document: unknown): Record<string, unknown> {
  const {
    paths = {},
    components,
    servers: _servers,
    ...rest
  } = document as { paths?: Record<string, unknown>; components?: Components; servers?: unknown }
  return { ...rest, paths: relativeToServers(paths), components: withTypedArrayItems(components) }
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
