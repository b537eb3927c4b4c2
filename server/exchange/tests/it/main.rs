mod markdown;
mod portal;
