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

	/**
	 * n8n-core 2.x asks this before it hands a node its credentials (assertCredentialUsableByNode);
	 * 1.x has no such check and never calls it. The same rule as n8n 2.41's CredentialsHelper: a
	 * type that sets `restrictToSupportedNodes` is usable only by its supported nodes, any other
	 * (an unknown one included: the look-up fails later, with its own error) by every node.
	 */
	isCredentialUsableByNode(credentialType: string, nodeType: string): boolean {
		if (!this.credentialTypes.recognizes(credentialType)) return true;
		// `restrictToSupportedNodes` is a 2.x member of ICredentialType; the pinned 1.x types lack it.
		const type = this.credentialTypes.getByName(credentialType) as { restrictToSupportedNodes?: boolean };
		if (!type.restrictToSupportedNodes) return true;
		return this.credentialTypes.getSupportedNodes(credentialType).includes(nodeType);
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

	/**
	 * n8n-core 2.x calls this (not preAuthentication) around OAuth2 token refreshes. The package's
	 * credential has no preAuthentication, so, as n8n 2.41's CredentialsHelper does for such a type,
	 * there is nothing to add.
	 */
	async runPreAuthentication(): Promise<undefined> {
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
