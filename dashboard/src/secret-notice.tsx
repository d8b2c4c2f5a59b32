import { useId, useState } from 'preact/hooks'

/** A signing secret, shown once: a warning, the value, and a copy button. */
export function SecretNotice({
  title,
  secret,
  onDone,
}: {
  title: string
  secret: string
  onDone: () => void
}) {
  const [copied, setCopied] = useState<string>()
  // Two notices can show at once (an endpoint added, another's secret rotated): ids of their own.
  const id = useId()
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret)
      setCopied('Copied to the clipboard.')
    } catch {
      setCopied('The browser refused the clipboard: select the secret and copy it by hand.')
    }
  }
  return (
    <section class="secret" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      <p class="warning">
        Copy this signing secret now: it is shown <strong>only this once</strong>. Your receiver needs it to
        verify every delivery (Standard Webhooks).
      </p>
      <label for={`${id}-value`}>Signing secret</label>
      <input
        id={`${id}-value`}
        class="secret-value"
        type="text"
        readOnly
        value={secret}
        onFocus={(event) => event.currentTarget.select()}
      />
      <div class="buttons">
        <button type="button" onClick={() => void copy()}>
          Copy secret
        </button>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </section>
  )
}
