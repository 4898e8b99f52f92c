/**
 * The schema wraps some columns twice (`Generated<Json<T>>`, `Generated<CreatedAt>`), so kysely's Selectable keeps
 * the inner ColumnType as their selected type. These helpers give those values their runtime type.
 */
export function jsonArray<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(value as string);
}

export interface InstalledPackage { identifier: string; version: string; buildVersion: string; system: boolean }
export interface DevicePropertyValue { name: string; value: string }
