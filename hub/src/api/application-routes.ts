/** /Application: list, upload (async), install/launch (async), uninstall (spec 4.1). */
import { Router } from 'express';
import { ApiFailure, success, successWith } from '@devicelab/shared';
import { deleteApplication, modifyApplication } from '../domain/application-changes';
import { installApplication, launchApplication, uninstallApplication, uninstallBundle } from '../domain/application-commands';
import { listApplications, uploadApplication } from '../domain/applications';
import { requireEntitlement } from '../auth/entitlements';
import { COMMAND_TIMEOUTS_MS } from '../domain/gateway-commands';
import { handle, NO_REPLY, type RequestContext } from '../http/handler';
import type { FirstReads } from '../http/first-reads';
import { writeKeptJson } from '../http/kept-json';
import type { RequestParams } from '../http/params';
import { createUploadMiddleware, discardUploads, takeUploadedFile, type UploadedFile } from '../http/upload';
import { applicationChanges } from './application-body';
import { asyncReply } from './async-reply';
import { keepRead, type ApiDependencies } from './context';
import { applicationFilters, operationName, postOperation, requireGuid, requireString, unknownAction } from './params';

export function applicationRouter(deps: ApiDependencies, firstReads?: FirstReads): Router {
  const { db, gateways, blobs, packages } = deps;
  const router = Router();
  // The upload's entitlement is checked here, before the body is read (an async upload must be refused before it
  // has an id, and a refused body must cost nothing), and again by uploadApplication.
  const upload = createUploadMiddleware({
    tempDir: deps.uploadTempDir,
    limitBytes: deps.uploadLimitBytes,
    takesFile: (params, user) => {
      if (postOperation(params) !== 'verb:add') return false;
      requireEntitlement(user, 'ApplicationUpload');
      return true;
    },
  });

  // The kept library is the same array until it changes, so its bytes (and ETag) are made once (http/kept-json.ts).
  // Polled: also answered before the generic middleware when it can be (http/first-reads.ts).
  const list = handle(async ({ req, res, params, user }) => {
    const applications = await listApplications(db, user, () => applicationFilters(params), keepRead(deps, req));
    await writeKeptJson(req, res, applications, params.pretty());
    return NO_REPLY;
  });
  router.get('/Application', firstReads?.add('/Application', list) ?? list);

  router.post('/Application', upload, handle(async (ctx) => {
    const { params, user } = ctx;
    const { op, file } = await operationAndUpload(ctx);
    if (file) {
      // uploadApplication removes the temporary file when it is done with it.
      return asyncReply(ctx, deps, 'upload', () => uploadApplication(db, blobs, packages, user, file),
        { waitReply: (app) => successWith(app) });
    }
    switch (op) {
      case 'action:install': {
        const appId = requireGuid(params, 'id');
        const deviceId = requireString(params, 'deviceId');
        const options = { force: params.bool('force'), nativeAutomation: params.bool('nativeAutomation') };
        const deadline = new Date(Date.now() + COMMAND_TIMEOUTS_MS.install).toISOString();
        return asyncReply(ctx, deps, 'install', async (progress) => {
          const installed = await installApplication(db, gateways, user, appId, deviceId, { ...options, onProgress: progress });
          // nativeAutomation=true: the Result says what that did on the device's platform.
          return installed.nativeAutomation ? { ...success(), nativeAutomation: installed.nativeAutomation } : success();
        }, { intent: { action: 'install', applicationId: appId, deviceIdentifier: deviceId, deadline } });
      }
      case 'verb:update':
        await modifyApplication(db, user, () => requireGuid(params, 'id'), applicationChanges(ctx.bodyText));
        return success();
      case 'verb:delete': {
        const appId = requireGuid(params, 'id');
        await deleteApplication(db, blobs, user, appId, { all: params.bool('all') });
        return success();
      }
      case 'action:uninstall': {
        const appId = requireGuid(params, 'id');
        const deviceId = requireString(params, 'deviceId');
        await uninstallApplication(db, gateways, user, appId, deviceId, { removeData: removeData(params) });
        return success();
      }
      case 'action:uninstallbundle': {
        const bundleId = requireString(params, 'bundleId');
        const deviceId = requireString(params, 'deviceId');
        await uninstallBundle(db, gateways, user, bundleId, deviceId, { removeData: removeData(params) });
        return success();
      }
      case 'action:launch': {
        const appId = requireGuid(params, 'id');
        const deviceId = requireString(params, 'deviceId');
        const options = { arguments: params.string('arguments'), startOnly: params.bool('startOnly') };
        return asyncReply(ctx, deps, 'launch', async () => {
          await launchApplication(db, gateways, user, appId, deviceId, options);
          return success();
        });
      }
      default:
        throw new ApiFailure(unknownAction(operationName(op)));
    }
  }));

  return router;
}

/**
 * The operation of a POST /Application and, for `add`, the uploaded file (the upload middleware took it only after
 * the entitlement check). The temporary file is removed whenever this fails.
 */
async function operationAndUpload(ctx: RequestContext): Promise<{ op: string; file?: UploadedFile }> {
  try {
    const op = postOperation(ctx.params);
    return op === 'verb:add' ? { op, file: await takeUploadedFile(ctx.req) } : { op };
  } catch (err) {
    await discardUploads(ctx.req);
    throw err;
  }
}

/**
 * `removedata`, or the alternate form's spelling `removedate` when `removedata` is absent. When neither is sent the
 * primary form's default applies (remove the data): a request cannot tell which form its client follows, and the
 * primary form is the one the spec and the C# client document.
 */
function removeData(params: RequestParams): boolean | undefined {
  return params.bool('removedata') ?? params.bool('removedate');
}
