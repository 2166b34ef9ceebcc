//! Whether a store has credentials to use before object_store falls back to a cloud metadata
//! service (169.254.169.254). On a cluster node that is not a cloud VM such a lookup hangs or
//! fails with "access denied", which says nothing about the missing keys; hpcio asks a metadata
//! service only when the user names its endpoint.

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};

fn set(value: Option<String>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

fn yes(value: Option<String>) -> bool {
    value.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on"))
}

fn env(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

/// None when the S3 builder has credentials (or the user chose a source), else where hpcio
/// looked, as one line.
pub fn s3_missing(b: &AmazonS3Builder) -> Option<String> {
    let has = |k: AmazonS3ConfigKey| set(b.get_config_value(&k));
    let found = has(AmazonS3ConfigKey::AccessKeyId)
        || has(AmazonS3ConfigKey::SecretAccessKey)
        || yes(b.get_config_value(&AmazonS3ConfigKey::SkipSignature))
        || (has(AmazonS3ConfigKey::WebIdentityTokenFile) && has(AmazonS3ConfigKey::RoleArn))
        || has(AmazonS3ConfigKey::ContainerCredentialsRelativeUri)
        || has(AmazonS3ConfigKey::ContainerCredentialsFullUri)
        || has(AmazonS3ConfigKey::MetadataEndpoint)
        || env("AWS_METADATA_ENDPOINT");
    (!found).then(|| {
        "no S3 credentials found: hpcio looked in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
         and in --store-option aws_access_key_id=/aws_secret_access_key=; set them (or \
         AWS_SKIP_SIGNATURE=true for a public bucket, AWS_METADATA_ENDPOINT to use an instance \
         profile)"
            .to_string()
    })
}

/// As `s3_missing`, for Azure Blob.
pub fn azure_missing(b: &MicrosoftAzureBuilder) -> Option<String> {
    let has = |k: AzureConfigKey| set(b.get_config_value(&k));
    let found = yes(b.get_config_value(&AzureConfigKey::UseEmulator))
        || has(AzureConfigKey::AccessKey)
        || has(AzureConfigKey::SasKey)
        || has(AzureConfigKey::Token)
        || has(AzureConfigKey::ClientId)
        || has(AzureConfigKey::FederatedTokenFile)
        || yes(b.get_config_value(&AzureConfigKey::UseAzureCli))
        || yes(b.get_config_value(&AzureConfigKey::SkipSignature))
        || yes(b.get_config_value(&AzureConfigKey::UseFabricEndpoint))
        || has(AzureConfigKey::MsiEndpoint);
    (!found).then(|| {
        "no Azure credentials found: hpcio looked in AZURE_STORAGE_ACCOUNT_KEY, \
         AZURE_STORAGE_SAS_KEY, AZURE_STORAGE_TOKEN, AZURE_CLIENT_ID and in --store-option \
         azure_storage_account_key= (and the others); set one (or AZURE_MSI_ENDPOINT to use a \
         managed identity)"
            .to_string()
    })
}

/// As `s3_missing`, for Google Cloud Storage (application default credentials count).
pub fn gcs_missing(b: &GoogleCloudStorageBuilder) -> Option<String> {
    let has = |k: GoogleConfigKey| set(b.get_config_value(&k));
    let default_file = std::env::var_os("HOME")
        .map(|home| std::path::Path::new(&home).join(".config/gcloud/application_default_credentials.json"))
        .is_some_and(|p| p.exists());
    let found = has(GoogleConfigKey::ServiceAccount)
        || has(GoogleConfigKey::ServiceAccountKey)
        || has(GoogleConfigKey::ApplicationCredentials)
        || has(GoogleConfigKey::BearerToken)
        || yes(b.get_config_value(&GoogleConfigKey::SkipSignature))
        || env("GOOGLE_APPLICATION_CREDENTIALS")
        || default_file;
    (!found).then(|| {
        "no GCS credentials found: hpcio looked in GOOGLE_SERVICE_ACCOUNT, \
         GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS, gcloud's application \
         default credentials and --store-option google_service_account_key=; set one"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_options_count_and_nothing_else_does() {
        let bare = AmazonS3Builder::new().with_bucket_name("b");
        assert!(s3_missing(&bare).unwrap().contains("AWS_ACCESS_KEY_ID"));
        let keyed = AmazonS3Builder::new()
            .with_config(AmazonS3ConfigKey::AccessKeyId, "k")
            .with_config(AmazonS3ConfigKey::SecretAccessKey, "s");
        assert!(s3_missing(&keyed).is_none());
        let public = AmazonS3Builder::new().with_config(AmazonS3ConfigKey::SkipSignature, "true");
        assert!(s3_missing(&public).is_none());
        assert!(azure_missing(&MicrosoftAzureBuilder::new()).is_some());
        let emulator = MicrosoftAzureBuilder::new().with_config(AzureConfigKey::UseEmulator, "true");
        assert!(azure_missing(&emulator).is_none());
    }
}
