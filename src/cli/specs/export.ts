/**
 * `mcpctl export`: what runs a server on another platform (Kubernetes manifests, a container image).
 * Each definition names the command, its arguments, options and help; its handler module loads only
 * when it runs.
 */
import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, parseEnvironment, parseInteger, type OptionsOf } from './options.js';

const DEFINITION = 'the definition (YAML), or a folder with a server.yaml (default: ./server.yaml)';

export function defineExport(parent: CommandUnknownOpts) {
  return parent.command('export').description('write what runs a server on another platform');
}

export function defineExportKubernetes(parent: CommandUnknownOpts) {
  return parent
    .command('kubernetes')
    .description(
      'write Kubernetes manifests for a definition or a built server: Deployment, Service, Secret, autoscaler, disruption budget, Ingress with TLS',
    )
    .argument('[target]', `an mcp_… id of a built server, or ${DEFINITION}`)
    .addOption(
      new Option('-e, --env <environment>', 'the environment the manifests are for (prod, stg, dev)')
        .argParser(parseEnvironment)
        .makeOptionMandatory(),
    )
    .option('--registry <registry>', 'where the cluster pulls the image from, such as registry.example.com/team')
    .option(
      '-o, --out <dir>',
      'folder to write one file per object in, or - for one YAML stream on stdout (default: k8s/<server>-<env>)',
    )
    .option('--namespace <namespace>', 'namespace of the objects (default: the one kubectl uses)')
    .option('--issuer <name>', 'cert-manager ClusterIssuer of the Ingress certificate (default: letsencrypt-prod)')
    .option('--ingress-class <name>', 'IngressClass of the Ingress (default: the cluster’s default class)')
    .option('--domain <host>', 'host name of the Ingress (default: the file’s deploy.domain)')
    .option(
      '--tasks-storage-class <name>',
      'a ReadWriteMany StorageClass whose claim the pods share for the state of tasks (tools marked task:)',
    )
    .option('--min-instances <n>', 'minimum instances', parseInteger('--min-instances', 0))
    .option('--max-instances <n>', 'maximum instances', parseInteger('--max-instances', 1))
    .option(
      '--env-var <NAME>',
      'put this variable in the Secret, with its value from your environment (repeatable)',
      collect,
    )
    .option('--env-file <file>', 'put the NAME=value lines of this file in the Secret');
}
export type ExportKubernetesOptions = OptionsOf<ReturnType<typeof defineExportKubernetes>>;

export function defineExportImage(parent: CommandUnknownOpts) {
  return parent
    .command('image')
    .description(
      'build the container image of a definition (mcpctl-server:<bundle digest>) on the Docker host of DOCKER_HOST; push it with --registry',
    )
    .argument('[file]', DEFINITION)
    .option('--base-image <image>', 'the image with node the server image starts from (default: node:20-slim)')
    .option('--registry <registry>', 'tag the image for this registry and push it, such as registry.example.com/team');
}
export type ExportImageOptions = OptionsOf<ReturnType<typeof defineExportImage>>;
