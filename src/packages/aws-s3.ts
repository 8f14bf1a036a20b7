/** The AWS SDK's S3 client, required (./require.ts): its values as `awsS3.S3Client`, its types from the package. */
import { requirePackage } from './require.js';

export const awsS3: typeof import('@aws-sdk/client-s3') = requirePackage('@aws-sdk/client-s3');
