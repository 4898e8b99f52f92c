/** The JSON body of `POST /Application?update` (spec 2.4: displayName is the one updatable property). */
import { ApiFailure } from '@devicelab/shared';
import type { ApplicationChanges } from '../domain/application-changes';
import { JsonBody } from '../http/json-body';

const UPDATABLE = ['displayname'] as const;

export const notUpdatable = (key: string): string =>
  `Property '${key}' cannot be updated. Updatable properties: displayName.`;

/**
 * The changes, read when the domain asks (after the entitlement check). An unknown key or a bad value fails the
 * whole request; `{}` is a valid, empty change.
 */
export function applicationChanges(bodyText: string): () => ApplicationChanges {
  return () => {
    const body = JsonBody.parse(bodyText);
    const unknown = body.keys().filter((key) => !(UPDATABLE as readonly string[]).includes(key));
    if (unknown.length > 0) throw new ApiFailure(notUpdatable(unknown[0]));
    const displayName = body.string('displayName');
    if (displayName === null || (displayName !== undefined && displayName.trim() === '')) {
      throw new ApiFailure('displayName must not be empty.');
    }
    return displayName === undefined ? {} : { displayName };
  };
}
