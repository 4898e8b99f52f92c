/**
 * The JSON body of `POST /Application?update`: displayName (spec 2.4), and the extension properties enabled and
 * notes (the spec's Application model has both, its update names only displayName).
 */
import { ApiFailure } from '@devicelab/shared';
import type { ApplicationChanges } from '../domain/application-changes';
import { JsonBody } from '../http/json-body';
import { echo } from '../http/echo';
import { BAD_BOOLEAN } from '../http/params';

const UPDATABLE = ['displayname', 'enabled', 'notes'] as const;

/** Longest notes kept: a note, not a document. */
export const MAX_APPLICATION_NOTES = 4000;

export const notUpdatable = (key: string): string =>
  `Property '${echo(key)}' cannot be updated. Updatable properties: displayName, enabled, notes.`;

/**
 * The changes, read when the domain asks (after the entitlement check). An unknown key or a bad value fails the
 * whole request; `{}` is a valid, empty change.
 */
export function applicationChanges(bodyText: string): () => ApplicationChanges {
  return () => {
    const body = JsonBody.parse(bodyText);
    const unknown = body.keys().filter((key) => !(UPDATABLE as readonly string[]).includes(key));
    if (unknown.length > 0) throw new ApiFailure(notUpdatable(unknown[0]));
    const changes: ApplicationChanges = {};
    const displayName = body.string('displayName');
    if (displayName === null || (displayName !== undefined && displayName.trim() === '')) {
      throw new ApiFailure('displayName must not be empty.');
    }
    if (displayName !== undefined) changes.displayName = displayName;
    if (body.has('enabled')) {
      const enabled = body.bool('enabled');
      if (enabled === undefined) throw new ApiFailure(BAD_BOOLEAN);
      changes.enabled = enabled;
    }
    if (body.has('notes')) {
      const notes = body.string('notes');
      if (notes && notes.length > MAX_APPLICATION_NOTES) {
        throw new ApiFailure(`notes must be at most ${MAX_APPLICATION_NOTES} characters.`);
      }
      changes.notes = notes || null; // empty or null clears the notes
    }
    return changes;
  };
}
