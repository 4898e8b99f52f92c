/** GET /openapi.json: the OpenAPI 3.1 description of this API; any authenticated user may read it. */
import { Router } from 'express';
import { handle } from '../http/handler';
import { buildOpenApiDocument } from './openapi/document';

export function openApiRouter(version?: string): Router {
  const router = Router();
  const document = buildOpenApiDocument(version);
  router.get('/openapi.json', handle(async () => document));
  return router;
}
