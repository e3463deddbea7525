/**
 * `mcpctl export image [file|folder] [--base-image B] [--registry R]`: the container image of a server,
 * `mcpctl-server:<bundle digest>`, built on the Docker host of DOCKER_HOST through the Engine API
 * (src/engine/runners/docker/images.ts), from the base image (node:20-slim unless told otherwise) plus this
 * mcpctl's runtime and the bundle `build` would make of the file. With `--registry` it is tagged
 * `R/mcpctl-server:<digest>` and pushed there (credentials: the `auths` of ~/.docker/config.json).
 *
 * From a file only (a folder means its `server.yaml`, nothing means `./server.yaml`): the bundle of a
 * build on a service is on that service's machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCP_ID_PATTERN } from '../../api/operations.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { loadDefinitionFile } from '../steps/definition-file.js';
import { chooseDefinition } from '../steps/definition-path.js';
import type { ExportImageOptions } from '../specs/export.js';

export async function exportImageCommand(
  ctx: CommandContext,
  given: string | undefined,
  options: ExportImageOptions,
): Promise<void> {
  if (given !== undefined && MCP_ID_PATTERN.test(given)) {
    throw new UserError(
      `export image needs the definition file, not a build id: the bundle of ${given} is on the service that built it`,
      {
        hint: 'run `mcpctl export image path/to/server.yaml` (the same file gives the same image tag)',
      },
    );
  }
  const { checkRegistry, DEFAULT_BASE_IMAGE } = await import('../../packaging/image.js');
  const registryProblem = options.registry === undefined ? undefined : checkRegistry(options.registry);
  if (registryProblem !== undefined) throw new UserError(`--registry ${options.registry}: ${registryProblem}`);
  const file = await loadDefinitionFile(ctx, await chooseDefinition(ctx, given));
  const [{ toBuildRequest }, { writeBundle }, docker, { createImageBuilder }] = await Promise.all([
    import('../../api/build-request.js'),
    import('../../runtime/host/bundle.js'),
    import('../../engine/runners/docker/engine-api.js'),
    import('../../engine/runners/docker/images.js'),
  ]);
  const baseImage = options.baseImage ?? DEFAULT_BASE_IMAGE;
  const temp = await mkdtemp(join(tmpdir(), 'mcpctl-image-'));
  let client;
  const progress = await ctx.out.progress(`building the image of ${file.shown} from ${baseImage}`);
  try {
    const bundle = await writeBundle(await toBuildRequest(file.loaded), temp);
    client = docker.createDockerClient(ctx.io.env);
    const builder = createImageBuilder({
      docker: client,
      baseImage,
      onProgress: (line) => progress.update(line.slice(0, 100)),
    });
    const built = await builder.ensure(bundle.dir);
    let pushed: string | undefined;
    if (options.registry !== undefined) {
      progress.update(`pushing ${built.image} to ${options.registry}`);
      pushed = await builder.push(
        built.digest,
        options.registry,
        await (await import('../../engine/runners/docker/registry-auth.js')).registryAuth(options.registry, ctx.io.env),
      );
    }
    progress.stop();
    const data = {
      image: built.image,
      digest: built.digest,
      base_image: baseImage,
      built: built.built,
      ...(pushed === undefined ? {} : { pushed }),
    };
    ctx.out.result(
      data,
      (p) => {
        p.success(
          built.built
            ? `Built ${built.image}`
            : `${built.image} is already on the Docker host (same content, same tag)`,
        );
        p.fields([
          ['base image', baseImage],
          ['pushed', pushed],
        ]);
        if (pushed === undefined)
          p.next('push it where a cluster pulls from with --registry registry.example.com/team');
      },
      { quiet: () => pushed ?? built.image },
    );
  } catch (error) {
    progress.fail('the image was not built');
    if (error instanceof docker.DockerUnavailableError) throw new UserError(error.message, { exitCode: EXIT.config });
    if (error instanceof docker.DockerApiError || (error as Error).name === 'BaseImageError')
      throw new UserError((error as Error).message);
    throw error;
  } finally {
    await client?.close().catch(() => undefined);
    await rm(temp, { recursive: true, force: true });
  }
}
