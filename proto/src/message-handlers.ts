/** What one end of the link does with each kind of message it receives, keyed by the message's `body`. */

/** The payload of the message whose `body` is `B` (`{ body: 'snapshot'; snapshot: ... }` -> the snapshot). */
export type MessagePayload<M extends { body: string }, B extends M['body']> =
  M extends { body: B } ? M[B & keyof M] : never;

/** One handler per message body; a capability's module lists the bodies it owns. */
export type MessageHandlers<M extends { body: string }> = {
  [B in M['body']]?: (payload: MessagePayload<M, B>) => void;
};
