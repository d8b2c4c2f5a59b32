import { expect, test } from 'vitest'
import { unknownVariableWarnings } from './config-typos.js'

test('an unknown PETSTORE_* variable is named with the closest known one', () => {
  expect(unknownVariableWarnings({ PETSTORE_PORTT: '1', PETSTORE_LOGLEVEL: 'debug' })).toEqual([
    'PETSTORE_LOGLEVEL is not a setting of petstore (ignored): did you mean LOG_LEVEL?',
    'PETSTORE_PORTT is not a setting of petstore (ignored): did you mean PORT?',
  ])
  expect(unknownVariableWarnings({ PETSTORE_BAN_AFTR: '3' })).toEqual([
    'PETSTORE_BAN_AFTR is not a setting of petstore (ignored): did you mean PETSTORE_BAN_AFTER?',
  ])
})

test("known variables, the CLI client's and other programs' are not warned about", () => {
  const env = {
    PETSTORE_ENV: 'staging',
    PETSTORE_URL: 'http://x',
    PETSTORE_API_KEY: 'k',
    HOME: '/root',
    PORTT: '1',
  }
  expect(unknownVariableWarnings(env)).toEqual([])
})
