import { type Browser, chromium } from 'playwright-core'

/** Debian's chromium (scripts/test-browser.sh installs it), headless; playwright downloads no browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] })
}
