/**
 * The order lanes start attempts in: each lane with something to start takes one turn per round (a lane
 * that started one goes to the back), while the instance has a free socket, at most STARTS_PER_TURN
 * before the event loop is yielded. `lanes.ts` says what a turn starts.
 */
import { type Lane, STARTS_PER_TURN } from './lane.js'

export interface TurnsOptions {
  /** Whether anything may start now (the leases are surely this instance's). */
  mayStart(): boolean
  /** Whether the instance has a free socket. */
  hasRoom(): boolean
  /** Starts the lane's next attempt if it may; whether it did. */
  startNext(lane: Lane): boolean
}

export function createTurns(options: TurnsOptions) {
  /** Lanes that may start an attempt now, in turn. */
  const ready = new Set<Lane>()
  let pumpQueued = false

  /** Pumps again at the next turn of the event loop (once, however often it is asked). */
  function pumpNextTurn(): void {
    if (pumpQueued) return
    pumpQueued = true
    setImmediate(() => {
      pumpQueued = false
      pump()
    })
  }

  /** Starts what may start, lanes in turn (a Set's iteration visits the lanes added back during it). */
  function pump(): void {
    if (!options.mayStart()) return
    let started = 0
    while (options.hasRoom() && ready.size > 0) {
      for (const lane of ready) {
        if (started >= STARTS_PER_TURN) {
          pumpNextTurn()
          return
        }
        // Out of sockets: the lane keeps its place, first when one frees.
        if (!options.hasRoom()) return
        ready.delete(lane)
        if (!options.startNext(lane)) continue
        started++
        ready.add(lane)
      }
    }
  }

  return {
    pump,
    /** The lane may start something (at the back of the turns if it was not waiting already). */
    add: (lane: Lane) => ready.add(lane),
    /** The lane is gone. */
    delete: (lane: Lane) => ready.delete(lane),
  }
}
