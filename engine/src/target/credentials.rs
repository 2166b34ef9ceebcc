//! Whether a store has credentials to use before object_store falls back to a cloud metadata
//! service (169.254.169.254). On a cluster node that is not a cloud VM such a lookup hangs or
//! fails with "access denied", which says nothing about the missing keys; hpcio asks a metadata
//! service only on that cloud's own VMs (their firmware says so, as the clouds' SDKs check) or
//! when the user names its endpoint.

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    Aws,
    Azure,
    Google,
}

/// The cloud whose VM this is, from the firmware's DMI strings (sys_vendor, product_name,
/// chassis_asset_tag), or None on any other machine.
pub fn cloud_of(sys_vendor: &str, product_name: &str, asset_tag: &str) -> Option<Cloud> {
    let (vendor, product) = (sys_vendor.trim(), product_name.trim());
    if vendor == "Amazon EC2" || product.starts_with("Amazon EC2") {
        Some(Cloud::Aws)
    } else if asset_tag.trim() == AZURE_ASSET_TAG {
        Some(Cloud::Azure)
    } else if vendor == "Google" || product == "Google Compute Engine" {
        Some(Cloud::Google)
    } else {
        None
    }
}

/// The chassis asset tag every Azure VM carries.
const AZURE_ASSET_TAG: &str = "7783-7084-3265-9085-8269-3286-77";

/// Whether this machine is a VM of `cloud`, whose metadata service then holds its identity.
fn on_vm_of(cloud: Cloud) -> bool {
    let read = |name: &str| std::fs::read_to_string(format!("/sys/class/dmi/id/{name}")).unwrap_or_default();
    cloud_of(&read("sys_vendor"), &read("product_name"), &read("chassis_asset_tag")) == Some(cloud)
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
        || env("AWS_METADATA_ENDPOINT")
        || on_vm_of(Cloud::Aws);
    (!found).then(|| {
        "no S3 credentials found: hpcio looked in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
         and in --store-option aws_access_key_id=/aws_secret_access_key=; set them (or \
         AWS_SKIP_SIGNATURE=true for a public bucket, AWS_METADATA_ENDPOINT to use an instance \
         profile; on an EC2 VM its instance profile is used)"
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
        || has(AzureConfigKey::MsiEndpoint)
        || on_vm_of(Cloud::Azure);
    (!found).then(|| {
        "no Azure credentials found: hpcio looked in AZURE_STORAGE_ACCOUNT_KEY, \
         AZURE_STORAGE_SAS_KEY, AZURE_STORAGE_TOKEN, AZURE_CLIENT_ID and in --store-option \
         azure_storage_account_key= (and the others); set one (or AZURE_MSI_ENDPOINT to use a \
         managed identity; on an Azure VM its managed identity is used)"
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
        || default_file
        || on_vm_of(Cloud::Google);
    (!found).then(|| {
        "no GCS credentials found: hpcio looked in GOOGLE_SERVICE_ACCOUNT, \
         GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS, gcloud's application \
         default credentials and --store-option google_service_account_key=; set one (on a \
         Compute Engine VM its service account is used)"
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

    #[test]
    fn a_cloud_vm_is_known_by_its_firmware() {
        assert_eq!(cloud_of("Amazon EC2\n", "m7i.large\n", "Amazon EC2\n"), Some(Cloud::Aws));
        assert_eq!(cloud_of("Xen\n", "HVM domU\n", ""), None);
        let tag = "7783-7084-3265-9085-8269-3286-77\n";
        assert_eq!(cloud_of("Microsoft Corporation\n", "Virtual Machine\n", tag), Some(Cloud::Azure));
        // Hyper-V on premises is not Azure.
        assert_eq!(cloud_of("Microsoft Corporation\n", "Virtual Machine\n", "0000\n"), None);
        assert_eq!(cloud_of("Google\n", "Google Compute Engine\n", ""), Some(Cloud::Google));
        assert_eq!(cloud_of("QEMU\n", "Standard PC (Q35 + ICH9, 2009)\n", ""), None);
    }
}
