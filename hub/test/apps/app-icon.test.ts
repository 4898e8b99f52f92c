/**
 * A broken icon is refused every time: pngjs's own inflate has returned garbage pixels for a broken stream on some
 * calls and failed on others, so one upload's icon was kept or dropped by chance.
 */
import { storedIcon } from '../../src/apps/app-icon';
import { undecodablePng } from '../support/hostile-packages';

it('an icon whose image data does not inflate is dropped on every call, never kept as garbage', () => {
  const icon = undecodablePng();
  const outcomes = Array.from({ length: 50 }, () => storedIcon(icon));
  expect(outcomes.filter((outcome) => outcome.dataUrl !== undefined)).toEqual([]);
  for (const outcome of outcomes) expect(outcome.warning).toMatch(/^The application's icon was not kept: it cannot be decoded/);
});
