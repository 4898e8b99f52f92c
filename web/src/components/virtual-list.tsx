/**
 * A windowed list of fixed-height rows: only the rows in view (plus a few) are in the DOM, so 1,000 devices
 * render and scroll like 20. The list scrolls inside its own box; keyboard users scroll it with the arrow keys.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

interface Props<T> {
  items: T[];
  rowHeight: number;
  render: (item: T, index: number) => ComponentChildren;
  label: string;
  overscan?: number;
}

export function VirtualList<T>({ items, rowHeight, render, label, overscan = 6 }: Props<T>) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useEffect(() => {
    const el = box.current!;
    const observer = new ResizeObserver(() => setHeight(el.clientHeight));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(<div role="listitem" class="vrow" style={{ top: i * rowHeight, height: rowHeight }} key={i}>{render(items[i], i)}</div>);
  }
  return (
    <div ref={box} class="vlist" role="list" aria-label={label} tabIndex={0}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}>
      <div style={{ height: items.length * rowHeight, position: 'relative' }}>{rows}</div>
    </div>
  );
}
