/**
 * The lab as a timeline: a row per device, time across (the seven days of a week, or the hours of one day), each
 * booking a block labelled with its booker (one's own in the accent colour), the current time as a line. A cell
 * books that device: a day from the hour pointed at (Enter: 09:00, or the next hour today), an hour from its
 * start; arrow keys move between cells.
 */
import { useMemo } from 'preact/hooks';
import type { Reservation } from '../api/types';
import { linkClick } from '../router';
import { BookingBlock } from './booking-block';
import { chosenHour, moveFocus, proposedSlot } from './slots';
import type { BookingViewProps } from './booking-form';
import { columnPosition, dayLabel, hourLabel, timeLabel } from './week';

interface Props extends BookingViewProps {
  /** The columns' bounds: 8 local midnights (a week) or 25 local hours (a day). */
  bounds: Date[];
  devices: { id: string; name: string }[];
}

export function LabTimeline({ bounds, devices, bookings, userId, now, onSlot, onSelect, selectedId }: Props) {
  const columns = bounds.length - 1;
  const byDay = columns === 7;
  const byDevice = useMemo(() => {
    const map = new Map<string, Reservation[]>();
    for (const b of bookings) {
      let list = map.get(b.deviceId);
      if (!list) map.set(b.deviceId, (list = []));
      list.push(b);
    }
    return map;
  }, [bookings]);
  const nowAt = now >= bounds[0].getTime() && now < bounds[columns].getTime() ? columnPosition(bounds, now) : undefined;
  // What every device's cell in a column shares, worked out once per column rather than once per cell.
  const heads = bounds.slice(0, columns).map((from, col) => ({
    from,
    current: now >= from.getTime() && now < bounds[col + 1].getTime(),
    past: bounds[col + 1].getTime() <= now,
    head: byDay ? dayLabel(from) : hourLabel(from),
    when: byDay ? `on ${dayLabel(from)}` : `from ${dayLabel(from)} ${timeLabel(from)}`,
  }));
  const slotAt = (col: number, e: MouseEvent) => {
    const from = bounds[col];
    return byDay ? proposedSlot(from, chosenHour(e, from, now), now) : proposedSlot(from, from.getHours(), now);
  };
  return (
    <div class="timeline-scroll">
      <div class={`timeline ${byDay ? 'by-day' : 'by-hour'}`} style={{ '--columns': columns }} data-testid="lab-calendar"
        onKeyDown={(e) => moveFocus(e, devices.length, columns)}>
        <div class="timeline-head">
          <span class="muted timeline-corner">Device</span>
          {heads.map((h) => <span key={h.from.getTime()} class={h.current ? 'today' : ''}>{h.head}</span>)}
        </div>
        {devices.map((device, row) => (
          <div class="timeline-row" key={device.id} data-device={device.name}>
            <a class="timeline-device" href={`/devices/${device.id}`} onClick={(e) => linkClick(e, `/devices/${device.id}`)}>{device.name}</a>
            <div class="timeline-track">
              {heads.map(({ past, when }, col) => onSlot
                ? <button type="button" key={col} class="cell" data-cell={`${row}:${col}`} tabIndex={row === 0 && col === 0 ? 0 : -1}
                  aria-label={`Book ${device.name} ${when}`} aria-disabled={past}
                  onClick={(e) => !past && onSlot({ deviceId: device.id, ...slotAt(col, e) })} />
                : <span key={col} class="cell" />)}
              {(byDevice.get(device.id) ?? []).map((b) => {
                const left = columnPosition(bounds, Date.parse(b.start)) / columns;
                const width = Math.max(columnPosition(bounds, Date.parse(b.end)) / columns - left, 0.004);
                return <BookingBlock key={b.id} booking={b} userId={userId} now={now} selected={b.id === selectedId}
                  position={{ left: `${left * 100}%`, width: `${width * 100}%` }} deviceName={device.name} onSelect={onSelect} />;
              })}
              {nowAt !== undefined && <span class="now-line" style={{ left: `${(nowAt / columns) * 100}%` }} aria-hidden="true" />}
            </div>
          </div>
        ))}
      </div>
    </div>
  );
}
