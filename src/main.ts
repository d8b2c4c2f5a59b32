import { existsSync } from 'node:fs'
import { exitIfStillHeld, serveFromEnvironment } from './start.js'

// The process entry of `npm start`; nothing imports this module (the CLI's `serve` calls start.ts itself).
if (existsSync('.env')) process.loadEnvFile('.env')
process.exitCode = await serveFromEnvironment(process.env)
exitIfStillHeld()
