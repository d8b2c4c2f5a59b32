import type { UsageDay } from '@petstore/client'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

/** One UTC day of the account's requests by status class, as `GET /v1/usage` answers it. */
export type UsageRow = UsageDay

export const CLASSES = ['2xx', '4xx', '429', '5xx'] as const

/** Bar colours, one per class, distinguishable with the common colour-vision deficiencies. */
const COLOURS: Record<(typeof CLASSES)[number], string> = {
  '2xx': '#1b7f3b',
  '4xx': '#d08c00',
  '429': '#7b3fb5',
  '5xx': '#c0262d',
}

const HEIGHT = 220

/**
 * Stacked bars of requests per UTC day (oldest left). uPlot draws each series from zero in order, so the
 * series are the running totals, largest first, each covering the one before; the legend and the
 * tooltip show each class's own number.
 */
export function drawUsageChart(target: HTMLElement, rows: readonly UsageRow[]): uPlot {
  const oldestFirst = [...rows].reverse()
  const days = oldestFirst.map((row) => Date.parse(`${row.day}T00:00:00Z`) / 1000)
  const own = CLASSES.map((name) => oldestFirst.map((row) => row[name]))
  const running = CLASSES.map((_, index) =>
    oldestFirst.map((row) => CLASSES.slice(0, index + 1).reduce((sum, name) => sum + row[name], 0)),
  )
  const order = [3, 2, 1, 0] as const
  const bars = uPlot.paths.bars?.({ size: [0.7, 40], gap: 1 })
  const options: uPlot.Options = {
    width: Math.max(280, target.clientWidth),
    height: HEIGHT,
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(5, max * 1.1)] } },
    axes: [{}, { size: 60 }],
    legend: { live: true },
    series: [
      {
        label: 'UTC day',
        value: (_u, seconds) => (seconds == null ? '' : new Date(seconds * 1000).toISOString().slice(0, 10)),
      },
      ...order.map((index) => {
        const name = CLASSES[index]
        return {
          label: name,
          stroke: COLOURS[name],
          fill: COLOURS[name],
          width: 0,
          ...(bars && { paths: bars }),
          points: { show: false },
          value: (_u: uPlot, _value: number, _series: number, at: number | null) =>
            at == null ? '' : new Intl.NumberFormat().format(own[index]?.[at] ?? 0),
        }
      }),
    ],
  }
  const data: uPlot.AlignedData = [days, ...order.map((index) => running[index] ?? [])]
  const chart = new uPlot(options, data, target)
  const resize = new ResizeObserver(() =>
    chart.setSize({ width: Math.max(280, target.clientWidth), height: HEIGHT }),
  )
  resize.observe(target)
  const destroy = chart.destroy.bind(chart)
  chart.destroy = () => {
    resize.disconnect()
    destroy()
  }
  return chart
}
