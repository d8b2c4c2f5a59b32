import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export interface Loaded<T> {
  data: T | undefined
  error: unknown
  reload: () => void
}

/**
 * Runs `load` when `key` changes and on `reload()`, and every `everyMs` while the tab is visible (a hidden
 * tab spends none of the partner's requests). A late answer of an earlier load never overwrites a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, key: string, everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<unknown>()
  const [round, setRound] = useState(0)
  const latest = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load

  // Runs again when `key` or `round` changes: those are what a load depends on.
  useEffect(() => {
    const ticket = ++latest.current
    loadRef.current().then(
      (value) => {
        if (ticket !== latest.current) return
        setData(value)
        setError(undefined)
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return
        setError(failure)
      },
    )
  }, [key, round])

  useEffect(() => {
    if (everyMs === undefined) return
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setRound((value) => value + 1)
    }, everyMs)
    return () => clearInterval(timer)
  }, [everyMs])

  const reload = useCallback(() => setRound((value) => value + 1), [])
  return { data, error, reload }
}

/** The current time, updated every second: for countdowns. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [])
  return now
}

export interface Action {
  busy: boolean
  error: unknown
  /** Runs `change`; its error is kept for display and the result is undefined. */
  run<T>(change: () => Promise<T>): Promise<T | undefined>
}

/** A change the partner asked for: whether it is under way, and its error. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const run = useCallback(async <T>(change: () => Promise<T>) => {
    setBusy(true)
    setError(undefined)
    try {
      return await change()
    } catch (failure) {
      setError(failure)
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run }
}
