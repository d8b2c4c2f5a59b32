import { existsSync } from 'node:fs'
import { enableCompileCache } from './compile-cache.js'

// The process entry of `npm start`; nothing imports this module (the CLI's `serve` calls start.ts itself).
if (existsSync('.env')) process.loadEnvFile('.env')
enableCompileCache()
const { exitIfStillHeld, serveFromEnvironment } = await import('./start.js')
process.exitCode = await serveFromEnvironment(process.env)
exitIfStillHeld()
