import { readdirSync, readFileSync } from 'node:fs'
import { listeningPort, runLoad, seedDatabase, startProcess } from './lib.js'

const path = '/tmp/sc/pn.sqlite'
const key = await seedDatabase(path, 1000)
const server = await startProcess(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir=/tmp/sc/prof', '--import', 'tsx', 'bench/naive.ts', path, key],
  listeningPort,
)
const r = await runLoad(server.child.pid!, {
  url: `http://127.0.0.1:${server.port}/v1/pets/5`,
  headers: { authorization: `Bearer ${key}` },
  connections: 50,
  duration: 8,
})
console.log(r.requestsPerSec)
await server.stop()
const file = readdirSync('/tmp/sc/prof')[0]!
const p = JSON.parse(readFileSync(`/tmp/sc/prof/${file}`, 'utf8'))
const nodes = new Map(p.nodes.map((n: any) => [n.id, n]))
const by = new Map<string, number>()
let total = 0
p.samples.forEach((id: number, i: number) => {
  const f = (nodes.get(id) as any).callFrame
  const d = p.timeDeltas[i]
  total += d
  const k = `${f.functionName} ${f.url.replace(/^.*node_modules\//, '')}:${f.lineNumber}`
  by.set(k, (by.get(k) ?? 0) + d)
})
console.log(
  [...by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1)}% ${k}`)
    .join('\n'),
)
