/** Who a request is counted against: its API key, or without a valid key its client IP. */
export const keySubject = (apiKeyId: number) => `key:${apiKeyId}`
export const ipSubject = (ip: string) => `ip:${ip}`
export const isKeySubject = (subject: string) => subject.startsWith('key:')
/** Test events sent to one webhook endpoint (CONTRACT §14: at most 10 a minute over every instance). */
export const webhookTestSubject = (endpointId: number) => `webhook-test:${endpointId}`
