import { Schema, type InferSchemaType } from 'mongoose';

/** A user's favourite contact; one document per (user, contact). */
export const FavouriteSchema = new Schema(
  {
    userId: { type: Schema.Types.ObjectId, required: true },
    contactId: { type: Schema.Types.ObjectId, required: true },
  },
  { timestamps: true },
);
FavouriteSchema.index({ userId: 1, contactId: 1 }, { unique: true });

export type FavouriteDoc = InferSchemaType<typeof FavouriteSchema>;
