/** The lab's booking calendar: every device's week, who has what when; book and cancel. */
import type { SessionUser } from '../api/types';
import { Calendar } from '../calendar/calendar';

export function CalendarPage({ user }: { user: SessionUser }) {
  return (
    <main class="page calendar-page">
      <h1>Calendar</h1>
      <Calendar user={user} />
    </main>
  );
}
