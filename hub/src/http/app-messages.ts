/**
 * The HTTP server's request and response classes, born with the Express application's prototypes. Express gives
 * every request and response its own prototype as it takes them (`Object.setPrototypeOf`); done to an object that
 * already exists, that makes V8 give it a new shape, and every later property access on it, in Node's HTTP code as
 * in ours, runs its slow path. Measured with wrk on a 71 KB answer from a first middleware: 15k req/s that way,
 * 35k with these classes. Express's own call then finds the prototype already set and changes nothing.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

type MessageClasses = Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'>;

export function appMessageClasses(app: Express): MessageClasses {
  // Function constructors, as Node's own are: a class could not take `app.request` itself as its prototype.
  function AppRequest(this: http.IncomingMessage, socket: Socket) {
    http.IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) {
    (http.ServerResponse as unknown as (this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) => void)
      .call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
  };
}
