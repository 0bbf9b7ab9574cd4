import {
	ICredentialsHelper,
	isExpression,
	type ICredentialDataDecryptedObject,
	type ICredentials,
	type ICredentialTypes,
	type IHttpRequestOptions,
	type INode,
	type INodeProperties,
	type IWorkflowExecuteAdditionalData,
	type Workflow,
} from 'n8n-workflow';

/**
 * Holds decrypted credentials in memory and authenticates requests with the credential type's
 * own `authenticate` block, resolving its expressions the way n8n's CredentialsHelper does.
 */
export class TestCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentialTypes: ICredentialTypes,
		public readonly byType: Record<string, ICredentialDataDecryptedObject>,
	) {
		super();
	}

	getParentTypes(name: string): string[] {
		return this.credentialTypes.getParentTypes(name);
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.credentialTypes.getByName(type).properties;
	}

	async getDecrypted(_data: IWorkflowExecuteAdditionalData, _node: unknown, type: string): Promise<ICredentialDataDecryptedObject> {
		const data = this.byType[type];
		if (!data) throw new Error(`No test credentials for type "${type}"`);
		return { ...data };
	}

	async getCredentials(): Promise<ICredentials> {
		throw new Error('Raw credentials are not available in tests');
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
		workflow: Workflow,
		node: INode,
	): Promise<IHttpRequestOptions> {
		const { authenticate } = this.credentialTypes.getByName(typeName);
		if (!authenticate) return requestOptions;
		if (typeof authenticate === 'function') return await authenticate(credentials, requestOptions);
		const resolveValue = (value: string): string =>
			isExpression(value)
				? String(
						workflow.expression.getSimpleParameterValue(node, value, 'internal', { $credentials: credentials }, undefined, '') ?? '',
					)
				: value;
		const target = requestOptions as unknown as Record<string, Record<string, string>>;
		for (const [part, values] of Object.entries(authenticate.properties)) {
			target[part] ??= {};
			for (const [key, value] of Object.entries(values as Record<string, string>)) {
				target[part][resolveValue(key)] = resolveValue(value);
			}
		}
		return requestOptions;
	}
}
