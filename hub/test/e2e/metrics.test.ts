/**
 * Metrics end to end on a whole lab (the hub as `startHub` composes it, one gateway with its default sampling,
 * simulated Android devices behind the real adb server), as a user would check it over HTTP: the last minute of
 * samples has memory, CPU and network fields; a retain-then-release cycle is queryable with `marker=session`;
 * `format=csv` downloads `metrics-<device name>.csv`.
 */
import { startTestLab, waitFor, type TestLab } from '../support/lab';

let lab: TestLab;
const admin = () => lab.admin;
const metrics = async (query: string) => lab.api(admin(), `/Device/Metrics?${query}`);
/** Response bodies are checked field by field. */
const jsonOf = async (res: Response): Promise<any> => res.json();
const post = async (query: string) => jsonOf(await lab.api(admin(), `/Device?${query}`, { method: 'POST' }));

beforeAll(async () => {
  lab = await startTestLab({ androidCount: 1 });
}, 90_000);
afterAll(() => lab?.stop(), 60_000);

it('samples of the last minute carry memory, CPU and network fields', async () => {
  const serial = lab.devices[0].serial;
  const start = new Date(Date.now() - 60_000).toISOString();
  // The gateway samples every 10 s by default; loads and rates need two reads.
  const { value: series } = await waitFor(async () => {
    const body = await jsonOf(await metrics(`id=${serial}&table=sample&start=${start}&fields=Used,Free,Load,Bytes+In+Per+Second`));
    const found = body.results?.[0]?.series?.[0];
    return found?.values.some((row: unknown[]) => row[3] !== null && row[4] !== null) ? found : undefined;
  }, 40_000, 'a sample with CPU load and network rate');
  expect(series.columns).toEqual(['time', 'Used', 'Free', 'Load', 'Bytes In Per Second']);
  const row = series.values.find((r: unknown[]) => r[3] !== null);
  for (const value of row.slice(1)) expect(typeof value).toBe('number');
}, 60_000);

it('a retain-then-release cycle is queryable with marker=session; csv downloads metrics-<device name>.csv', async () => {
  const serial = lab.devices[0].serial;
  expect((await post(`action=retain&id=${serial}`)).isSuccess).toBe(true);
  const retainedAt = Date.now();
  const device = await lab.hub.db.selectFrom('devices').select(['id', 'name']).where('serial_number', '=', serial).executeTakeFirstOrThrow();
  await waitFor(async () => {
    const body = await jsonOf(await metrics(`id=${serial}&table=sample&start=${new Date(retainedAt).toISOString()}&fields=Used`));
    return body.results[0].series?.[0]?.values.length > 0;
  }, 30_000, 'a sample taken while retained');
  expect(await post(`action=release&id=${serial}`)).toEqual({ isSuccess: true });

  const body = await jsonOf(await metrics(`id=${serial}&table=sample&marker=session&fields=Used&aggr=count,mean`));
  const [series] = body.results[0].series;
  expect(series.tags.marker).toBe('session');
  expect(Date.parse(series.tags.markerEnd)).toBeGreaterThan(Date.parse(series.tags.markerStart));
  expect(series.values[0][1]).toBeGreaterThanOrEqual(1);

  const csv = await metrics(`id=${device.id}&table=sample&marker=session&format=csv`);
  expect(csv.headers.get('content-disposition')).toContain(`filename="metrics-${device.name}.csv"`);
  const lines = (await csv.text()).trim().split('\r\n');
  expect(lines[0]).toMatch(/^name,tags,time,device_id,/);
  expect(lines.length).toBeGreaterThan(1);
}, 60_000);
