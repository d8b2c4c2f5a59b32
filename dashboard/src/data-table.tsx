import type { ComponentChildren } from 'preact'

/**
 * A table of the page: captioned (screen readers announce it), one header cell per column, its rows the
 * children; it scrolls sideways on a narrow screen instead of breaking ids and times.
 */
export function DataTable(props: {
  caption: string
  columns: readonly ComponentChildren[]
  class?: string
  children: ComponentChildren
}) {
  return (
    <div class="table-wrap">
      <table class={props.class}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column, index) => (
              <th scope="col" key={index}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  )
}
